import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Glue for tests driving the app through HummingbirdTesting: one line per response checked.
///
///     try await app.test(.router) { client in
///         try await client.execute(uri: "/v1/tenants", method: .get, headers: auth) { response in
///             contract.expectConforms(response, method: "GET", path: "/v1/tenants")
///         }
///     }
extension OpenAPIContract {
    /// Records one Swift Testing issue per way `response` breaks the spec, at the caller's line.
    func expectConforms(_ response: TestResponse, method: String, path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for problem in violations(of: response, method: method, path: path) {
            Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
        }
    }

    func violations(of response: TestResponse, method: String, path: String) -> [String] {
        validateResponse(
            method: method, path: path, status: response.status.code,
            contentType: response.headers[.contentType], body: Data(response.body.readableBytesView)
        )
    }

    /// For tests that mean to send a valid request: records an issue if the spec would call it invalid.
    func expectValidRequest(method: String, path: String, body: ByteBuffer?, sourceLocation: SourceLocation = #_sourceLocation) {
        for problem in validateRequest(method: method, path: path, body: body.map { Data($0.readableBytesView) }) {
            Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
        }
    }
}
