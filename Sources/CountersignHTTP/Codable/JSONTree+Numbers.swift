/// Reading number nodes. Integers are read exactly from their digits (never through a
/// double), so every Int64 survives; like Foundation's decoder, an integral value written
/// `1.0` or `1e3` is an integer too, but `1.00000000000000000001` is not.
extension JSONTree {
    enum IntegerReading<Value> {
        case value(Value)
        /// The number has a fractional part.
        case notInteger
        /// The number is an integer that `Value` cannot hold.
        case outOfRange
    }

    func integer<Value: FixedWidthInteger>(at index: Int, as type: Value.Type) -> IntegerReading<Value> {
        let node = nodes[index]
        return bytes.withUnsafeBufferPointer { all in
            let text = UnsafeBufferPointer(rebasing: all[Int(node.start)..<Int(node.start + node.length)])
            let negative = text[0] == UInt8(ascii: "-")
            let magnitude: UInt64?
            if node.isPlainInteger {
                magnitude = Self.accumulate(text[(negative ? 1 : 0)...], into: 0)
            } else {
                switch Self.integralMagnitude(of: text, skipping: negative ? 1 : 0) {
                case .value(let value): magnitude = value
                case .notInteger: return .notInteger
                case .outOfRange: magnitude = nil
                }
            }
            guard let magnitude else { return .outOfRange }
            let value: Value?
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return .outOfRange }
                value = Value(exactly: magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            } else {
                value = Value(exactly: magnitude)
            }
            return value.map { .value($0) } ?? .outOfRange
        }
    }

    /// The number at `index` as the nearest double; `nil` when it is too large for one, or so
    /// small that it would silently become zero (Foundation refused both).
    func double(at index: Int) -> Double? {
        let node = nodes[index]
        if node.isPlainInteger, node.length <= 16, case .value(let integer) = self.integer(at: index, as: Int64.self) {
            // Up to 15 digits (and a sign): exact in a double, and no text conversion needed.
            return Double(integer)
        }
        return bytes.withUnsafeBufferPointer { all in
            let text = UnsafeBufferPointer(rebasing: all[Int(node.start)..<Int(node.start + node.length)])
            guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { return nil }
            if value == 0, text.prefix(while: { $0 | 0x20 != UInt8(ascii: "e") }).contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
                return nil
            }
            return value
        }
    }

    /// `digits` appended to `start` in base 10; `nil` on overflow.
    private static func accumulate(_ digits: some Sequence<UInt8>, into start: UInt64) -> UInt64? {
        var value = start
        for digit in digits {
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = shifted.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            value = sum
        }
        return value
    }

    /// The magnitude of a number with a fraction or exponent, when it is an integer: its
    /// significant digits scaled by the exponent left after the fraction is used up.
    private static func integralMagnitude(of text: UnsafeBufferPointer<UInt8>, skipping sign: Int) -> IntegerReading<UInt64> {
        let exponentMark = text.firstIndex { $0 | 0x20 == UInt8(ascii: "e") } ?? text.endIndex
        let mantissa = text[sign..<exponentMark]
        let point = mantissa.firstIndex(of: UInt8(ascii: ".")) ?? mantissa.endIndex
        let fractionDigits = point == mantissa.endIndex ? 0 : mantissa.endIndex - point - 1

        var exponent = 0
        if exponentMark < text.endIndex {
            var digits = text[(exponentMark + 1)...]
            let negative = digits.first == UInt8(ascii: "-")
            if digits.first == UInt8(ascii: "-") || digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
            for digit in digits {
                // Anything past this is out of range or zero either way; stop before Int overflows.
                exponent = min(exponent * 10 + Int(digit - UInt8(ascii: "0")), 100_000)
            }
            if negative { exponent = -exponent }
        }

        let significant = mantissa.filter { $0 != UInt8(ascii: ".") }.drop { $0 == UInt8(ascii: "0") }
        guard let lastNonZero = significant.lastIndex(where: { $0 != UInt8(ascii: "0") }) else { return .value(0) }
        let trailingZeros = significant.distance(from: lastNonZero, to: significant.endIndex) - 1
        let scale = exponent - fractionDigits + trailingZeros
        guard scale >= 0 else { return .notInteger }
        let digits = significant[..<significant.index(after: lastNonZero)]
        guard digits.count + scale <= 20, var value = accumulate(digits, into: 0) else { return .outOfRange }
        for _ in 0..<scale {
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            guard !overflowed else { return .outOfRange }
            value = shifted
        }
        return .value(value)
    }
}
