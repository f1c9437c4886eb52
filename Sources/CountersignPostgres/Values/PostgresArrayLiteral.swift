/// PostgreSQL's text form of one-dimensional arrays (`{a,"b c",NULL}`).
enum PostgresArrayLiteral {
    /// An array literal in which every element is quoted, so that no element can be taken
    /// for `NULL`, a delimiter or a nested array, whatever it contains.
    static func encode(_ elements: [String]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal.append(",") }
            literal.append("\"")
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { literal.append("\\") }
                literal.unicodeScalars.append(character)
            }
            literal.append("\"")
        }
        literal.append("}")
        return literal
    }

    /// The elements of PostgreSQL's output for a one-dimensional array; `nil` elements are
    /// NULL. Returns nil if the text is not such an array (multi-dimensional included).
    static func decode(_ text: String) -> [String?]? {
        var scalars = Substring(text).unicodeScalars[...]

        // An explicit lower bound is printed as a prefix: `[0:1]={a,b}`.
        if scalars.first == "[" {
            guard let equals = scalars.firstIndex(of: "=") else { return nil }
            scalars = scalars[scalars.index(after: equals)...]
        }
        guard scalars.first == "{", scalars.last == "}" else { return nil }
        scalars = scalars.dropFirst().dropLast()

        var elements: [String?] = []
        if scalars.allSatisfy({ $0 == " " }) { return elements }

        var index = scalars.startIndex
        while true {
            while index < scalars.endIndex, scalars[index] == " " { index = scalars.index(after: index) }
            guard index < scalars.endIndex else { return nil }

            if scalars[index] == "\"" {
                var element = String.UnicodeScalarView()
                index = scalars.index(after: index)
                var closed = false
                while index < scalars.endIndex {
                    let scalar = scalars[index]
                    index = scalars.index(after: index)
                    if scalar == "\\" {
                        guard index < scalars.endIndex else { return nil }
                        element.append(scalars[index])
                        index = scalars.index(after: index)
                    } else if scalar == "\"" {
                        closed = true
                        break
                    } else {
                        element.append(scalar)
                    }
                }
                guard closed else { return nil }
                elements.append(String(element))
                while index < scalars.endIndex, scalars[index] == " " { index = scalars.index(after: index) }
            } else {
                guard scalars[index] != "{" else { return nil }
                var element = String.UnicodeScalarView()
                var sawEscape = false
                while index < scalars.endIndex, scalars[index] != "," {
                    let scalar = scalars[index]
                    index = scalars.index(after: index)
                    if scalar == "\\" {
                        guard index < scalars.endIndex else { return nil }
                        element.append(scalars[index])
                        index = scalars.index(after: index)
                        sawEscape = true
                    } else if scalar == "{" || scalar == "}" || scalar == "\"" {
                        return nil
                    } else {
                        element.append(scalar)
                    }
                }
                var value = String(element)
                while value.last == " " { value.removeLast() }
                if !sawEscape, value.uppercased() == "NULL" {
                    elements.append(nil)
                } else {
                    elements.append(value)
                }
            }

            guard index < scalars.endIndex else { return elements }
            guard scalars[index] == "," else { return nil }
            index = scalars.index(after: index)
        }
    }
}
