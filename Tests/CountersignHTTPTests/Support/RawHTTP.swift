import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP/1.1 spoken by hand over a socket, for requests no HTTP client library sends (broken
/// chunked framing) and for reading a response exactly as the server wrote it.
enum RawHTTP {
    /// Sends `request` as is (it should ask for `Connection: close`) and returns the status,
    /// every header as `[name, value]` in order, and the body.
    static func exchange(_ request: String, port: Int) async throws -> (status: Int, headers: [[String]], body: String) {
        try Self.parse(try await transfer(Array(request.utf8), then: nil, port: port).final)
    }

    /// Sends `head` (which should carry `Expect: 100-continue`), waits for the interim response
    /// and returns it, then sends `body` and returns the final response as `exchange` does.
    /// `meanwhile` runs (on the socket's thread) after the interim response, before the body.
    static func exchange(
        head: String,
        thenBody body: String,
        port: Int,
        meanwhile: (@Sendable () -> Void)? = nil
    ) async throws -> (interim: String, final: (status: Int, headers: [[String]], body: String)) {
        let (interim, final) = try await transfer(Array(head.utf8), then: Array(body.utf8), meanwhile: meanwhile, port: port)
        return (String(decoding: interim, as: UTF8.self), try Self.parse(final))
    }

    /// Sends `request`, waits until what comes back holds `marker`, sends `body`, and returns
    /// everything the server wrote until it closed: several responses, for pipelined requests.
    static func conversation(_ request: String, waitingFor marker: String? = nil, thenBody body: String = "", port: Int) async throws -> String {
        let (before, after) = try await transfer(Array(request.utf8), then: marker == nil ? nil : Array(body.utf8), until: marker.map { Array($0.utf8) }, port: port)
        return String(decoding: before + after, as: UTF8.self)
    }

    /// The status codes of the responses in `text`, in order.
    static func statuses(_ text: String) -> [Int] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    private static func transfer(
        _ request: [UInt8],
        then body: [UInt8]?,
        until marker: [UInt8]? = nil,
        meanwhile: (@Sendable () -> Void)? = nil,
        port: Int
    ) async throws -> (interim: [UInt8], final: [UInt8]) {
        try await withCheckedThrowingContinuation { continuation in
            // Blocking socket calls belong on a thread of their own, not on the cooperative pool.
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try Self.transferBlocking(request, then: body, until: marker ?? Array("\r\n\r\n".utf8), meanwhile: meanwhile, port: port)
                })
            }
        }
    }

    private static func transferBlocking(
        _ request: [UInt8],
        then body: [UInt8]?,
        until marker: [UInt8],
        meanwhile: (@Sendable () -> Void)?,
        port: Int
    ) throws -> (interim: [UInt8], final: [UInt8]) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw RawHTTPFailure("socket: \(errno)") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RawHTTPFailure("connect to port \(port): errno \(errno)") }
        func sendAll(_ bytes: [UInt8]) throws {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { throw RawHTTPFailure("send: errno \(errno)") }
                sent += count
            }
        }
        /// Reads until the peer closes, or only until `marker` when `headOnly`.
        func receive(headOnly: Bool) throws -> [UInt8] {
            var response: [UInt8] = []
            var byte: UInt8 = 0
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = headOnly
                    ? recv(descriptor, &byte, 1, 0)
                    : buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count >= 0 else { throw RawHTTPFailure("recv: errno \(errno)") }
                if count == 0 { return response }
                if headOnly {
                    response.append(byte)
                    if response.count >= marker.count, response.suffix(marker.count).elementsEqual(marker) { return response }
                } else {
                    response.append(contentsOf: buffer[..<count])
                }
            }
        }
        try sendAll(request)
        guard let body else { return ([], try receive(headOnly: false)) }
        let interim = try receive(headOnly: true)
        meanwhile?()
        try sendAll(body)
        return (interim, try receive(headOnly: false))
    }

    private static func parse(_ raw: [UInt8]) throws -> (status: Int, headers: [[String]], body: String) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = raw.indices.first(where: { raw[$0...].starts(with: separator) }) else {
            throw RawHTTPFailure("not an HTTP response: \(String(decoding: raw.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw RawHTTPFailure("not a status line: \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> [String]? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return [String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)]
        }
        return (status, headers, String(decoding: raw[(end + separator.count)...], as: UTF8.self))
    }
}

struct RawHTTPFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
