import Foundation

extension Array where Element == UInt8 {
    /// Bytes from hex digits; test vectors are written this way.
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self = bytes
    }
}

/// One directory per test process for the tests' files, removed when the process exits.
private let scratchRoot: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("countersign-crypto-tests-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        .path
    atexit { try? FileManager.default.removeItem(atPath: scratchRoot) }
    return path
}()

/// A fresh directory for one test's files.
func makeTemporaryDirectory() throws -> String {
    let path = (scratchRoot as NSString).appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
