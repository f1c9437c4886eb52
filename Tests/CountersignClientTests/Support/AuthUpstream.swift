import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// An upstream HTTP server that demands Basic or Digest authentication, for clients that handle
/// raw 401s themselves: `GET /private` answers 200 to the right credentials, `GET /forbidden`
/// answers them 403 (authenticated, not allowed); anything else gets 401 with the challenge.
///
/// Requests go to it through Hummingbird's test client, a plain HTTP/1.1 client that hands back a
/// 401 as it is (swift-corelibs-foundation's URLSession needs a delegate for that).
struct AuthUpstream: Sendable {
    enum Scheme: String, Sendable, CaseIterable, CustomStringConvertible {
        case basic = "Basic"
        case digest = "Digest"

        var description: String { rawValue }
        /// The method a protection space of this scheme has.
        var methodName: String { self == .basic ? "NSURLAuthenticationMethodHTTPBasic" : "NSURLAuthenticationMethodHTTPDigest" }
    }

    static let realm = "Fleet Raw"
    let scheme: Scheme
    let port: Int
    let log: RequestLog
    private let client: any TestClientProtocol

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// One answer of the upstream, headers in order.
    struct Reply: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
    }

    /// What reached the server: one `Authorization` value (or nil) per request, and for each
    /// Digest value that was refused, why.
    final class RequestLog: Sendable {
        private let entries = Mutex<(authorizations: [String?], refusals: [String])>(([], []))
        func append(_ authorization: String?) { entries.withLock { $0.authorizations.append(authorization) } }
        func refused(_ reason: String) { entries.withLock { $0.refusals.append(reason) } }
        var authorizations: [String?] { entries.withLock { $0.authorizations } }
        var refusals: [String] { entries.withLock { $0.refusals } }
    }

    func get(_ path: String, authorization: String? = nil) async throws -> Reply {
        var headers: HTTPFields = [:]
        if let authorization { headers[.authorization] = authorization }
        let response = try await client.executeRequest(uri: path, method: .get, headers: headers, body: nil)
        return Reply(status: Int(response.status.code), headers: response.headers.map { ($0.name.rawName, $0.value) })
    }

    static func run<T: Sendable>(
        _ scheme: Scheme,
        user: String,
        password: String,
        _ body: @Sendable (AuthUpstream) async throws -> T
    ) async throws -> T {
        let log = RequestLog()
        let digest = DigestVerifier(user: user, password: password, realm: realm)
        let basic = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()

        @Sendable func authenticated(_ request: Request) -> Bool {
            let authorization = request.headers[.authorization]
            log.append(authorization)
            guard let authorization else { return false }
            switch scheme {
            case .basic:
                return authorization == basic
            case .digest:
                if let refusal = digest.rejection(of: authorization, method: request.method.rawValue, uri: request.uri.description) {
                    log.refused(refusal)
                    return false
                }
                return true
            }
        }

        @Sendable func unauthorized() -> Response {
            var headers: HTTPFields = [.contentType: "text/plain"]
            switch scheme {
            case .basic: headers.append(HTTPField(name: .wwwAuthenticate, value: #"Basic realm="\#(realm)""#))
            case .digest:
                for challenge in digest.challenges() { headers.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
            }
            return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "who are you?")))
        }

        let router = Router()
        router.get("/private") { request, _ -> Response in
            guard authenticated(request) else { return unauthorized() }
            return Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "welcome")))
        }
        router.get("/forbidden") { request, _ -> Response in
            guard authenticated(request) else { return unauthorized() }
            return Response(status: .forbidden, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "not you")))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw CocoaError(.featureUnsupported) }
            return try await body(AuthUpstream(scheme: scheme, port: port, log: log, client: client))
        }
    }
}
