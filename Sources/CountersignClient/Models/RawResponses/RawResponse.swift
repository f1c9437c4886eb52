public import Foundation

/// A raw 401, 407 or 403 response forwarded to the service (`POST /v1/sessions/{id}/responses`),
/// the `RawResponseRequest` schema of the contract: for clients that do not parse challenges
/// themselves (CFHTTPAuthentication style).
///
/// The service parses every challenge in `WWW-Authenticate` (401) or `Proxy-Authenticate` (407),
/// picks the strongest one it holds a credential for, and answers with the ready
/// `Authorization` / `Proxy-Authorization` header (see ``ResponseAnswer``). A second 401/407 for
/// the same task after that header counts as its rejection; a 403 after it records that the
/// server took the credential and refuses anyway.
public struct RawResponse: Codable, Hashable, Sendable {
    /// The client's name for the request, the same for every response of one request: a second
    /// 401 for the task tells the service its header was refused.
    public var taskId: String
    /// 401 (origin server), 407 (proxy; ``proxy`` is then required) or 403 (after a request that
    /// carried the header Countersign issued).
    public var status: Int
    /// Every response header, in order, repeated ones kept.
    public var headers: [ResponseHeader]
    /// The request the response answered.
    public var request: ForwardedRequest
    /// The proxy that answered 407 (or 403).
    public var proxy: ForwardedProxy?
    /// The decision whose header the request carried; by default the service takes the latest
    /// credential it released to this task for this server.
    public var previousDecisionId: UUID?
    /// `false` when the request carried no header Countersign issued (the task's first request):
    /// the response then judges no release, even when the answer to an earlier forward of it was
    /// lost (a 503, a dropped connection) after the service recorded a release the client never
    /// got. Set it, with ``previousDecisionId`` once a header was sent, and a forward repeated
    /// after a failure never counts a rejection nobody made.
    public var carriedHeader: Bool?

    public init(
        taskId: String,
        status: Int,
        headers: [ResponseHeader],
        request: ForwardedRequest,
        proxy: ForwardedProxy? = nil,
        previousDecisionId: UUID? = nil,
        carriedHeader: Bool? = nil
    ) {
        self.taskId = taskId
        self.status = status
        self.headers = headers
        self.request = request
        self.proxy = proxy
        self.previousDecisionId = previousDecisionId
        self.carriedHeader = carriedHeader
    }

    /// The statuses the service takes.
    public static let forwardableStatuses: Set<Int> = [401, 403, 407]
}
