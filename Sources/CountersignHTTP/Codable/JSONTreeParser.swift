import CountersignCore

/// Parses a request body into a `JSONTree`, refusing anything RFC 8259 does not allow (trailing
/// commas, comments, leading zeros, bad escapes, lone surrogates, control characters and invalid
/// UTF-8 in strings, text after the value) and what a service should not take from strangers:
/// nesting deeper than `maximumDepth`, and an object naming a member twice (which JSON leaves
/// undefined, and which would let two readers of one body see different values).
struct JSONTreeParser {
    static let maximumDepth = 128

    /// Bodies beyond this cannot be addressed by the tree's 32-bit offsets.
    static let maximumLength = Int(UInt32.max / 2)

    static func parse(_ text: [UInt8]) throws(JSONSyntaxError) -> JSONTree {
        guard text.count <= maximumLength else { throw JSONSyntaxError("the body is too large to parse") }
        let (nodes, unescaped) = try text.withUnsafeBufferPointer { input throws(JSONSyntaxError) in
            var parser = JSONTreeParser(input: input)
            try parser.parseDocument()
            return (parser.nodes, parser.unescaped)
        }
        let tree = JSONTree(bytes: unescaped.isEmpty ? text : text + unescaped, nodes: nodes)
        try Self.refuseDuplicateMembers(in: tree)
        return tree
    }

    private let input: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var nodes: [JSONTree.Node] = []
    /// Strings with escapes, unescaped; the tree appends them to the text.
    private var unescaped: [UInt8] = []

    private init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        // About one node per 8 bytes in typical bodies; growing past that is cheap.
        nodes.reserveCapacity(min(input.count / 8 + 4, 4096))
    }

    private mutating func parseDocument() throws(JSONSyntaxError) {
        // A UTF-8 byte order mark, which RFC 8259 lets parsers ignore, as Foundation did.
        if input.count >= 3, input[0] == 0xEF, input[1] == 0xBB, input[2] == 0xBF { position = 3 }
        try parseValue(depth: 0)
        skipWhitespace()
        guard position == input.count else { throw JSONSyntaxError("text after the JSON value", at: position) }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) {
        skipWhitespace()
        guard position < input.count else { throw JSONSyntaxError("the body ends where a value should be", at: position) }
        switch input[position] {
        case UInt8(ascii: "{"): try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): try parseString()
        case UInt8(ascii: "t"): try parseLiteral("true", as: .true)
        case UInt8(ascii: "f"): try parseLiteral("false", as: .false)
        case UInt8(ascii: "n"): try parseLiteral("null", as: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try parseNumber()
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            throw JSONSyntaxError(previousNonWhitespace() == UInt8(ascii: ",") ? "a trailing comma" : "a value is missing", at: position)
        case UInt8(ascii: ","):
            throw JSONSyntaxError("a value is missing", at: position)
        default: throw JSONSyntaxError("unexpected character", at: position)
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) {
        guard depth <= Self.maximumDepth else { throw JSONSyntaxError("arrays and objects nest deeper than \(Self.maximumDepth) levels", at: position) }
        let index = nodes.count
        nodes.append(JSONTree.Node(kind: .object))
        position += 1
        var count: UInt32 = 0
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                guard position < input.count else { throw JSONSyntaxError("the body ends inside an object", at: position) }
                guard input[position] == UInt8(ascii: "\"") else {
                    if input[position] == UInt8(ascii: "}") { throw JSONSyntaxError("a trailing comma", at: position) }
                    throw JSONSyntaxError("a member name (a string) is missing", at: position)
                }
                try parseString()
                skipWhitespace()
                guard position < input.count, input[position] == UInt8(ascii: ":") else {
                    throw JSONSyntaxError("':' is missing after a member name", at: position)
                }
                position += 1
                try parseValue(depth: depth)
                count += 1
                skipWhitespace()
                guard position < input.count else { throw JSONSyntaxError("the body ends inside an object", at: position) }
                let byte = input[position]
                position += 1
                if byte == UInt8(ascii: "}") { break }
                guard byte == UInt8(ascii: ",") else { throw JSONSyntaxError("',' or '}' is missing", at: position - 1) }
            }
        }
        nodes[index].length = count
        nodes[index].end = UInt32(nodes.count)
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) {
        guard depth <= Self.maximumDepth else { throw JSONSyntaxError("arrays and objects nest deeper than \(Self.maximumDepth) levels", at: position) }
        let index = nodes.count
        nodes.append(JSONTree.Node(kind: .array))
        position += 1
        var count: UInt32 = 0
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                try parseValue(depth: depth)
                count += 1
                skipWhitespace()
                guard position < input.count else { throw JSONSyntaxError("the body ends inside an array", at: position) }
                let byte = input[position]
                position += 1
                if byte == UInt8(ascii: "]") { break }
                guard byte == UInt8(ascii: ",") else { throw JSONSyntaxError("',' or ']' is missing", at: position - 1) }
            }
        }
        nodes[index].length = count
        nodes[index].end = UInt32(nodes.count)
    }

    private mutating func parseLiteral(_ literal: StaticString, as kind: JSONTree.Kind) throws(JSONSyntaxError) {
        let length = literal.utf8CodeUnitCount
        guard input.count - position >= length,
              UnsafeBufferPointer(rebasing: input[position..<position + length]).elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: length))
        else { throw JSONSyntaxError("unexpected character", at: position) }
        position += length
        nodes.append(JSONTree.Node(kind: kind, end: UInt32(nodes.count + 1)))
    }

    /// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`; its value is read when a type asks.
    private mutating func parseNumber() throws(JSONSyntaxError) {
        let start = position
        if input[position] == UInt8(ascii: "-") { position += 1 }
        guard position < input.count, Self.isDigit(input[position]) else { throw JSONSyntaxError("a number has no digits", at: position) }
        if input[position] == UInt8(ascii: "0") {
            position += 1
            if position < input.count, Self.isDigit(input[position]) { throw JSONSyntaxError("a number has a leading zero", at: start) }
        } else {
            skipDigits()
        }
        var isPlainInteger = true
        if position < input.count, input[position] == UInt8(ascii: ".") {
            isPlainInteger = false
            position += 1
            guard position < input.count, Self.isDigit(input[position]) else { throw JSONSyntaxError("a number has no digits after '.'", at: position) }
            skipDigits()
        }
        if position < input.count, input[position] | 0x20 == UInt8(ascii: "e") {
            isPlainInteger = false
            position += 1
            if position < input.count, input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-") { position += 1 }
            guard position < input.count, Self.isDigit(input[position]) else { throw JSONSyntaxError("a number has no digits in its exponent", at: position) }
            skipDigits()
        }
        nodes.append(JSONTree.Node(
            kind: .number, isPlainInteger: isPlainInteger, start: UInt32(start), length: UInt32(position - start), end: UInt32(nodes.count + 1)
        ))
    }

    private mutating func skipDigits() {
        while position < input.count, Self.isDigit(input[position]) { position += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// A string (a value or a member name). Strings without escapes point into the text; the
    /// others are unescaped into `unescaped`.
    private mutating func parseString() throws(JSONSyntaxError) {
        position += 1
        let start = position
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                nodes.append(JSONTree.Node(kind: .string, start: UInt32(start), length: UInt32(position - start), end: UInt32(nodes.count + 1)))
                position += 1
                return
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(from: start)
            } else if byte < 0x20 {
                throw JSONSyntaxError("a control character in a string (escape it)", at: position)
            } else if byte < 0x80 {
                position += 1
            } else {
                try skipUTF8Scalar()
            }
        }
        throw JSONSyntaxError("the body ends inside a string", at: position)
    }

    /// The rest of a string that has escapes, from its first backslash.
    private mutating func parseEscapedString(from start: Int) throws(JSONSyntaxError) {
        let unescapedStart = input.count + unescaped.count
        unescaped.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<position]))
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                let length = input.count + unescaped.count - unescapedStart
                nodes.append(JSONTree.Node(kind: .string, start: UInt32(unescapedStart), length: UInt32(length), end: UInt32(nodes.count + 1)))
                position += 1
                return
            } else if byte == UInt8(ascii: "\\") {
                try parseEscape()
            } else if byte < 0x20 {
                throw JSONSyntaxError("a control character in a string (escape it)", at: position)
            } else if byte < 0x80 {
                unescaped.append(byte)
                position += 1
            } else {
                let scalarStart = position
                try skipUTF8Scalar()
                unescaped.append(contentsOf: UnsafeBufferPointer(rebasing: input[scalarStart..<position]))
            }
        }
        throw JSONSyntaxError("the body ends inside a string", at: position)
    }

    private mutating func parseEscape() throws(JSONSyntaxError) {
        let escapeStart = position
        guard position + 1 < input.count else { throw JSONSyntaxError("the body ends inside a string", at: input.count) }
        position += 2
        switch input[escapeStart + 1] {
        case UInt8(ascii: "\""): unescaped.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): unescaped.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): unescaped.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): unescaped.append(0x08)
        case UInt8(ascii: "f"): unescaped.append(0x0C)
        case UInt8(ascii: "n"): unescaped.append(0x0A)
        case UInt8(ascii: "r"): unescaped.append(0x0D)
        case UInt8(ascii: "t"): unescaped.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHexQuad(escapeStart: escapeStart)
            if 0xD800...0xDBFF ~= scalar {
                // A high surrogate counts only with the low surrogate escaped right after it.
                guard position + 1 < input.count, input[position] == UInt8(ascii: "\\"), input[position + 1] == UInt8(ascii: "u") else {
                    throw JSONSyntaxError("a \\u escape is half of a surrogate pair", at: escapeStart)
                }
                position += 2
                let low = try parseHexQuad(escapeStart: position - 2)
                guard 0xDC00...0xDFFF ~= low else { throw JSONSyntaxError("a \\u escape is half of a surrogate pair", at: escapeStart) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if 0xDC00...0xDFFF ~= scalar {
                throw JSONSyntaxError("a \\u escape is half of a surrogate pair", at: escapeStart)
            }
            // Valid JSON, but PostgreSQL's text and jsonb cannot hold U+0000, and no field has a
            // use for it: refused here, for every string of every body, rather than deep inside
            // a transaction.
            guard scalar != 0 else { throw JSONSyntaxError("a string holds U+0000 (\\u0000), which Countersign does not accept", at: escapeStart) }
            // Not a surrogate, so always a scalar.
            unescaped.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
        default:
            throw JSONSyntaxError("an invalid escape in a string", at: escapeStart)
        }
    }

    private mutating func parseHexQuad(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        guard input.count - position >= 4 else { throw JSONSyntaxError("a \\u escape needs four hex digits", at: escapeStart) }
        var value: UInt32 = 0
        for byte in input[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError("a \\u escape needs four hex digits", at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }

    /// Steps over one multi-byte UTF-8 scalar, refusing overlong forms, surrogates and values
    /// past U+10FFFF (Unicode table 3-7).
    private mutating func skipUTF8Scalar() throws(JSONSyntaxError) {
        let lead = input[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw JSONSyntaxError("invalid UTF-8", at: position)
        }
        guard input.count - position >= length, secondRange ~= input[position + 1] else { throw JSONSyntaxError("invalid UTF-8", at: position) }
        for offset in 2..<length where !(0x80...0xBF ~= input[position + offset]) {
            throw JSONSyntaxError("invalid UTF-8", at: position)
        }
        position += length
    }

    private mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }

    private func previousNonWhitespace() -> UInt8? {
        input[..<position].last { ![UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains($0) }
    }

    /// Objects are checked once the tree is complete, so that the error can name the member.
    private static func refuseDuplicateMembers(in tree: JSONTree) throws(JSONSyntaxError) {
        for (index, node) in tree.nodes.enumerated() where node.kind == .object && node.length > 1 {
            if let name = duplicateName(in: index, of: tree) {
                throw JSONSyntaxError("\(FieldPath(tree.codingPath(to: name + 1))) appears twice in one object")
            }
        }
    }

    /// The name node of a member whose name an earlier member of the object already has.
    private static func duplicateName(in object: Int, of tree: JSONTree) -> Int? {
        tree.bytes.withUnsafeBufferPointer { bytes in
            func text(_ name: Int) -> UnsafeBufferPointer<UInt8> {
                let node = tree.nodes[name]
                return UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.start + node.length)])
            }
            let names = tree.memberNames(of: object)
            if names.remaining <= 16 {
                for (position, name) in names.enumerated() {
                    let spelling = text(name)
                    if names.prefix(position).contains(where: { tree.string(at: $0, equals: spelling) }) { return name }
                }
                return nil
            }
            // Large objects (a dictionary of headers, or a hostile body) are sorted instead of
            // compared pairwise, so that the check stays O(n log n).
            let sorted = names.sorted { text($0).lexicographicallyPrecedes(text($1)) }
            for (earlier, later) in zip(sorted, sorted.dropFirst()) where text(earlier).elementsEqual(text(later)) {
                return max(earlier, later)
            }
            return nil
        }
    }
}

/// Why a request body is not JSON (RFC 8259), in words a client can act on. Never quotes the
/// body's values: a body may carry a password.
struct JSONSyntaxError: Error, CustomStringConvertible, Equatable {
    let description: String

    init(_ reason: String, at offset: Int) {
        description = "\(reason) at byte \(offset)"
    }

    init(_ description: String) {
        self.description = description
    }
}
