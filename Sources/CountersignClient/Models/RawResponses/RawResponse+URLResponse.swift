public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension RawResponse {
    /// The response a URLSession (or any Foundation HTTP stack) received, for `request`.
    ///
    /// The URL is the response's (after redirects, the one that asked), the method the request's.
    /// `HTTPURLResponse` folds repeated header fields into one comma-separated value, which
    /// RFC 9110 allows for `WWW-Authenticate` and which the service parses; the challenge fields
    /// come first, the others follow by name. Cookies are left out, as from forwarded challenges.
    public init(
        taskId: String,
        response: HTTPURLResponse,
        request: URLRequest,
        proxy: ForwardedProxy? = nil,
        previousDecisionId: UUID? = nil,
        carriedHeader: Bool? = nil
    ) {
        var headers: [ResponseHeader] = []
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String,
                !ChallengeSnapshot.withheldHeaders.contains(name.lowercased())
            else { continue }
            headers.append(ResponseHeader(name, value))
        }
        let challengeFields: Set<String> = ["www-authenticate", "proxy-authenticate"]
        headers.sort { left, right in
            let leftIsChallenge = challengeFields.contains(left.name.lowercased())
            let rightIsChallenge = challengeFields.contains(right.name.lowercased())
            if leftIsChallenge != rightIsChallenge { return leftIsChallenge }
            return left.name.lowercased() < right.name.lowercased()
        }
        let url = (response.url ?? request.url).map(Self.withoutUserInfo)
        self.init(
            taskId: taskId,
            status: response.statusCode,
            headers: headers,
            request: ForwardedRequest(method: request.httpMethod ?? "GET", url: url ?? ""),
            proxy: proxy,
            previousDecisionId: previousDecisionId,
            carriedHeader: carriedHeader
        )
    }

    /// `url` without its user and password: a password written into the URL is the app's secret,
    /// which Countersign neither needs (the service answers from its own credentials) nor may see.
    static func withoutUserInfo(_ url: URL) -> String {
        guard url.user != nil || url.password != nil else { return url.absoluteString }
        // A URL that cannot be taken apart is sent as nothing (the service answers 400), never whole.
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "" }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        return components.string ?? ""
    }
}
