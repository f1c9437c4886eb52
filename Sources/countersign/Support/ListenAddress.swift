#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser

/// Whether the service can listen where it is told, asked before anything else starts: a
/// taken port would otherwise be found after the migrations ran (and, for `dev`, after the
/// banner printed keys for a service that never started), and reported by NIO as
/// `bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`.
enum ListenAddress {
    static func checkAvailable(host: String, port: Int) throws {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw StartupError("cannot listen on \(display(host: host, port: port)): no such address")
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // As the server will: a port in TIME_WAIT is free.
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = errno == EADDRINUSE ? "the address is in use (another process listens there)" : String(cString: strerror(errno))
            throw StartupError("cannot listen on \(display(host: host, port: port)): \(reason)")
        }
    }

    /// `host:port`, with an IPv6 address in brackets (RFC 3986).
    static func display(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
