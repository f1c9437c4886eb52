import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TCP ports on 127.0.0.1 for servers a test starts.
public enum LoopbackPort {
    /// A port nobody listens on right now: the kernel's pick for a socket bound to port 0.
    public static func free() throws -> Int {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw LoopbackPortError(step: "socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw LoopbackPortError(step: "bind") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw LoopbackPortError(step: "getsockname") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// No free port could be had: `step` is the socket call that failed.
public struct LoopbackPortError: Error, CustomStringConvertible {
    public let step: String

    public var description: String { "could not find a free loopback port: \(step)() failed (errno \(errno))" }
}
