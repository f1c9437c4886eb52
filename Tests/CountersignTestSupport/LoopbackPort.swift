import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TCP ports on 127.0.0.1 for servers a test starts.
public enum LoopbackPort {
    /// A port nobody listens on right now, handed out in turn (none twice before all the others),
    /// below the kernel's ephemeral range. Outgoing connections take their local ports from that
    /// range: a port the kernel picked for a socket bound to port 0 was once taken by one of the
    /// run's own client connections before the test's server bound it ("address in use").
    public static func free() throws -> Int {
        let range = candidates
        for _ in 0..<range.count {
            let port = next.withLock { next in
                defer { next = next + 1 < range.upperBound ? next + 1 : range.lowerBound }
                return next
            }
            if try bindable(port) { return port }
        }
        throw LoopbackPortError(step: "bind")
    }

    /// From 20000 up to the ephemeral range's start (Linux's `ip_local_port_range`; 32768 where it
    /// cannot be read, as on macOS, whose range starts at 49152).
    private static let candidates: Range<Int> = {
        let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let start = text?.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        return 20000..<max(start, 21000)
    }()

    /// Where the next search starts: random, so that a run does not begin on the ports the run
    /// before it (the debug run before the release one) may still hold in TIME_WAIT.
    private static let next = Mutex(Int.random(in: candidates))

    /// Whether a socket can bind `port` on 127.0.0.1 now.
    private static func bindable(_ port: Int) throws -> Bool {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw LoopbackPortError(step: "socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        } == 0
    }
}

/// No free port could be had: `step` is the socket call that failed.
public struct LoopbackPortError: Error, CustomStringConvertible {
    public let step: String

    public var description: String { "could not find a free loopback port: \(step)() failed (errno \(errno))" }
}
