import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// An upstream HTTP server that demands Basic authentication, as the servers fleet apps talk to:
/// `GET /private` answers 200 to `user:password`, else 401 with `WWW-Authenticate`; `GET /slow`
/// answers 200 at once and then trickles its body, a byte every half second for half a minute.
struct BasicAuthServer: Sendable {
    static let realm = "Fleet"
    let port: Int
    let log: RequestLog

    var url: URL { URL(string: "http://127.0.0.1:\(port)/private")! }

    /// What reached the server: one `Authorization` value (or nil) per request.
    final class RequestLog: Sendable {
        private let entries = Mutex<[String?]>([])
        func append(_ authorization: String?) { entries.withLock { $0.append(authorization) } }
        var authorizations: [String?] { entries.withLock { $0 } }
    }

    static func run<T: Sendable>(user: String, password: String, _ body: @Sendable (BasicAuthServer) async throws -> T) async throws -> T {
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        let log = RequestLog()
        let router = Router()
        router.get("/private") { request, _ -> Response in
            let authorization = request.headers[.authorization]
            log.append(authorization)
            if authorization == expected {
                return Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "welcome")))
            }
            return Response(
                status: .unauthorized,
                headers: [.wwwAuthenticate: #"Basic realm="\#(realm)""#, .contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "who are you?"))
            )
        }
        router.get("/open") { _, _ in "open" }
        router.get("/slow") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain"],
                body: ResponseBody { writer in
                    for _ in 0..<60 {
                        try await writer.write(ByteBuffer(string: "."))
                        try await Task.sleep(for: .milliseconds(500))
                    }
                    try await writer.finish(nil)
                }
            )
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw CocoaError(.featureUnsupported) }
            return try await body(BasicAuthServer(port: port, log: log))
        }
    }
}
