public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A typed client for Countersign's client API (the operations a `client` key may call), over
/// URLSession, written against `openapi.yaml`.
///
/// ```swift
/// let client = CountersignClient(baseURL: URL(string: "https://countersign.example.com")!,
///                                key: ClientKey(secret))
/// let session = try await client.openSession(OpenSessionRequest(clientId: "ios-7F3A"))
/// let answer = try await client.decideChallenge(challenge, in: session.id)
/// ```
///
/// Every call throws ``CountersignClientError``: `.service` with the service's status, code and
/// message, `.transport`, or `.decoding`. Calls are retried only where a repeat is safe (see
/// ``RetryPolicy``). The key is sent only in the `Authorization` header and never appears in a
/// description or an error; redirects are not followed (the contract has none), so it never goes
/// anywhere but `baseURL`: a 3xx fails with `.service` code `http_<status>`. A client is safe to
/// share between tasks and threads.
public final class CountersignClient: Sendable {
    /// What the client was made with.
    public let configuration: Configuration
    let urlSession: URLSession
    private let sessionDelegate = InternalSessionDelegate()

    /// Where the service is, the key, and how patient to be.
    public struct Configuration: Sendable {
        /// The service's base URL (`https://countersign.example.com`, or with a path prefix).
        public var baseURL: URL
        /// The `client` key.
        public var key: ClientKey
        /// Longest wait for one HTTP exchange with the service (URLSession's request timeout:
        /// the longest silence while waiting for data). At least one second: FoundationNetworking
        /// counts it in whole seconds, and times out at once below one.
        public var requestTimeout: Duration
        /// Retries where safe.
        public var retry: RetryPolicy
        /// Sent as `User-Agent`.
        public var userAgent: String

        public init(
            baseURL: URL,
            key: ClientKey,
            requestTimeout: Duration = .seconds(10),
            retry: RetryPolicy = .default,
            userAgent: String = "CountersignClient/1"
        ) {
            self.baseURL = baseURL
            self.key = key
            self.requestTimeout = requestTimeout
            self.retry = retry
            self.userAgent = userAgent
        }
    }

    /// A client with its own ephemeral URLSession (no cookies, no cache, no credential storage).
    public init(configuration: Configuration) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = Self.timeoutInterval(configuration.requestTimeout)
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.urlCache = nil
        sessionConfiguration.urlCredentialStorage = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        urlSession = URLSession(configuration: sessionConfiguration, delegate: sessionDelegate, delegateQueue: nil)
    }

    public convenience init(baseURL: URL, key: ClientKey) {
        self.init(configuration: Configuration(baseURL: baseURL, key: key))
    }

    deinit {
        // The URLSession keeps its delegate until it is invalidated; let pending calls finish.
        urlSession.finishTasksAndInvalidate()
    }

    /// Makes one call, with retries where its safety allows (by `retry`, or the client's
    /// policy), and decodes its answer.
    func send<Response>(_ request: APIRequest<Response>, retry: RetryPolicy? = nil) async throws(CountersignClientError) -> Response {
        let urlRequest = try makeURLRequest(request)
        let policy = retry ?? configuration.retry
        var attempt = 1
        while true {
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await urlSession.data(for: urlRequest)
            } catch {
                let urlError = error as? URLError ?? URLError(.unknown)
                if urlError.code == .cancelled, let status = sessionDelegate.takeRefusedChallengeStatus(for: urlRequest.url) {
                    throw .service(
                        status: status,
                        code: Self.foreignCode(status),
                        message: "the service, or a proxy in front of it, asked for HTTP authentication (\(status)); Countersign takes the key as a bearer token: check the base URL and any proxy"
                    )
                }
                if attempt < policy.maxAttempts, RetryPolicy.mayRetry(urlError, request.safety) {
                    try await pause(policy.backoff(after: attempt))
                    attempt += 1
                    continue
                }
                throw .transport(urlError)
            }
            guard let http = response as? HTTPURLResponse else {
                throw .decoding(operation: request.operation, reason: "the answer is not HTTP")
            }
            let status = http.statusCode
            if request.success.contains(status) {
                do {
                    return try JSONCoding.decoder().decode(Response.self, from: data)
                } catch {
                    throw .decoding(operation: request.operation, reason: "the \(status) body is not the contract's \(Response.self)")
                }
            }
            let error = Self.serviceError(status: status, body: data)
            if attempt < policy.maxAttempts, RetryPolicy.mayRetry(status: status, request.safety, fromCountersign: error.serviceCode != Self.foreignCode(status)),
                let delay = policy.delay(after: attempt, retryAfter: RetryPolicy.retryAfter(http.value(forHTTPHeaderField: "Retry-After")))
            {
                try await pause(delay)
                attempt += 1
                continue
            }
            throw error
        }
    }

    private func makeURLRequest<Response>(_ request: APIRequest<Response>) throws(CountersignClientError) -> URLRequest {
        let base = configuration.baseURL
        guard base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw .invalidRequest("the base URL must be an http or https URL with a host")
        }
        var url = base.appendingPathComponent(request.path)
        if !request.query.isEmpty {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw .invalidRequest("the URL of \(request.operation) could not be built")
            }
            components.queryItems = request.query
            // `URLComponents` leaves `+` as is, which the service reads as a space, as forms send one.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            guard let withQuery = components.url else { throw .invalidRequest("the URL of \(request.operation) could not be built") }
            url = withQuery
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = Self.timeoutInterval(configuration.requestTimeout)
        urlRequest.setValue("Bearer \(configuration.key.secret)", forHTTPHeaderField: "Authorization")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue(configuration.userAgent, forHTTPHeaderField: "User-Agent")
        if let body = request.body {
            urlRequest.httpBody = body
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return urlRequest
    }

    /// URLSession's timeout for `duration`, never below one second (FoundationNetworking times
    /// out at once below that).
    static func timeoutInterval(_ duration: Duration) -> TimeInterval {
        max(1, duration.timeInterval)
    }

    private func pause(_ duration: Duration) async throws(CountersignClientError) {
        do {
            try await Task.sleep(for: duration)
        } catch {
            throw .transport(URLError(.cancelled))
        }
    }

    /// The error of a non-success answer: the contract's error body when there is one.
    static func serviceError(status: Int, body: Data) -> CountersignClientError {
        struct ErrorBody: Decodable {
            struct Detail: Decodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        if let parsed = try? JSONDecoder().decode(ErrorBody.self, from: body) {
            return .service(status: status, code: parsed.error.code, message: parsed.error.message)
        }
        return .service(status: status, code: foreignCode(status), message: "the service answered \(status) without a Countersign error body")
    }

    /// The code of an answer that is not Countersign's error body.
    static func foreignCode(_ status: Int) -> String { "http_\(status)" }
}

extension CountersignClient: CustomStringConvertible {
    public var description: String { "CountersignClient(\(configuration.baseURL.absoluteString), \(configuration.key))" }
}

extension Duration {
    /// Seconds, as Foundation's `TimeInterval`.
    var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
