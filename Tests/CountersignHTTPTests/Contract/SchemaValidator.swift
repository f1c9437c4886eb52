import Foundation

/// The subset of JSON Schema 2020-12 that OpenAPI 3.1 specs use, plus OpenAPI 3.0's `nullable` and boolean
/// `exclusiveMinimum`/`exclusiveMaximum`, which older habits still write. Keywords it does not know are
/// ignored here and reported by `OpenAPIContract.lint()`, so a constraint nobody enforces does not pass silently.
struct SchemaValidator: Sendable {
    /// The document `#/...` references resolve against.
    let root: JSONValue

    /// Keywords `validate` enforces or deliberately treats as annotations; lint reports the rest.
    static let knownKeywords: Set<String> = [
        "$ref", "$schema", "$id", "$comment", "$defs", "definitions", "$anchor", "$dynamicAnchor",
        "type", "nullable", "enum", "const", "format",
        "minLength", "maxLength", "pattern",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
        "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "required",
        "minProperties", "maxProperties", "propertyNames", "dependentRequired",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
        // Annotations: no effect on validity.
        "title", "description", "default", "example", "examples", "deprecated", "readOnly", "writeOnly",
        "discriminator", "xml", "externalDocs", "contentMediaType", "contentEncoding", "contentSchema",
    ]

    /// Formats checked; any other format is an annotation, as JSON Schema allows.
    static let checkedFormats: Set<String> = ["uuid", "date-time", "date", "byte", "uri", "email", "ipv4", "int32", "int64"]

    /// Violations of `instance` against `schema`, each prefixed with the JSON path of the offending value.
    func validate(_ instance: JSONValue, against schema: JSONValue, at path: String = "$") -> [String] {
        check(instance, schema, path, refs: []).errors
    }

    // MARK: - Core

    /// Errors plus the property names this schema "evaluated", which `unevaluatedProperties` needs to see
    /// through `allOf`/`$ref`/`oneOf` composition.
    private struct Outcome {
        var errors: [String] = []
        var evaluated: Set<String> = []
        /// The value is not even of the schema's type: the weakest candidate when explaining a failed oneOf.
        var wrongType = false
        var isValid: Bool { errors.isEmpty }
    }

    /// A `$ref` re-entered at the same instance location can only loop (`A: {$ref: B}`, `B: {$ref: A}`);
    /// recursion through data (a tree of nodes) moves the location on and is fine.
    private struct RefVisit: Hashable {
        let ref: String
        let path: String
    }

    private func check(_ instance: JSONValue, _ schema: JSONValue, _ path: String, refs: Set<RefVisit>) -> Outcome {
        switch schema {
        case .bool(true): return Outcome()
        case .bool(false): return Outcome(errors: ["\(path): no value is allowed here (schema is false)"])
        case .object(let s): return checkObjectSchema(instance, s, path, refs: refs)
        default: return Outcome(errors: ["\(path): schema is not an object or boolean: \(schema.shortDescription)"])
        }
    }

    private func checkObjectSchema(_ instance: JSONValue, _ s: [String: JSONValue], _ path: String, refs: Set<RefVisit>) -> Outcome {
        var out = Outcome()

        // OpenAPI 3.0: `nullable: true` admits null whatever else the schema says.
        if s["nullable"] == .bool(true), instance == .null { return out }

        if let ref = s["$ref"]?.stringValue {
            let visit = RefVisit(ref: ref, path: path)
            if refs.contains(visit) {
                out.errors.append("\(path): circular $ref \(ref)")
            } else if let target = root.resolvePointer(ref) {
                let sub = check(instance, target, path, refs: refs.union([visit]))
                out.errors += sub.errors
                out.evaluated.formUnion(sub.evaluated)
                out.wrongType = sub.wrongType
            } else {
                out.errors.append("\(path): unresolvable $ref \(ref)")
            }
        }

        if let typeError = checkType(instance, s, path) {
            out.errors.append(typeError)
            out.wrongType = true
            return out
        }

        if let allowed = s["enum"]?.arrayValue, !allowed.contains(where: instance.jsonEquals) {
            let list = allowed.map { $0.stringValue ?? $0.description }.joined(separator: ", ")
            out.errors.append("\(path): \(instance.shortDescription) is not one of \(list)")
        }
        if let constant = s["const"], !instance.jsonEquals(constant) {
            out.errors.append("\(path): \(instance.shortDescription) is not the constant \(constant.shortDescription)")
        }

        switch instance {
        case .string(let string): out.errors += checkString(string, s, path)
        case .integer, .number: out.errors += checkNumber(instance, s, path)
        case .array(let items): out.errors += checkArray(items, s, path, refs: refs)
        default: break
        }
        if case .object(let members) = instance {
            checkObjectMembers(members, s, path, refs: refs, into: &out)
        }

        checkApplicators(instance, s, path, refs: refs, into: &out)

        // Last: it needs to know what every other keyword, here and in subschemas, evaluated.
        if case .object(let members) = instance, let unevaluated = s["unevaluatedProperties"] {
            for key in members.keys.sorted() where !out.evaluated.contains(key) {
                if unevaluated == .bool(false) {
                    out.errors.append("\(Self.child(path, key)): unexpected property (unevaluatedProperties is false)")
                } else {
                    out.errors += check(members[key]!, unevaluated, Self.child(path, key), refs: refs).errors
                }
            }
            out.evaluated.formUnion(members.keys)
        }
        return out
    }

    private func checkType(_ instance: JSONValue, _ s: [String: JSONValue], _ path: String) -> String? {
        var types: [String]
        switch s["type"] {
        case .string(let t)?: types = [t]
        case .array(let ts)?: types = ts.compactMap(\.stringValue)
        default: return nil
        }
        if s["nullable"] == .bool(true) { types.append("null") }
        let actual = instance.typeName
        let fits = types.contains { $0 == actual || ($0 == "number" && actual == "integer") }
        if fits { return nil }
        return "\(path): expected \(types.joined(separator: " or ")), got \(actual) \(instance.shortDescription)"
    }

    private func checkString(_ string: String, _ s: [String: JSONValue], _ path: String) -> [String] {
        var errors: [String] = []
        // JSON Schema counts code points, not UTF-16 units or grapheme clusters.
        let length = string.unicodeScalars.count
        if let min = s["minLength"]?.doubleValue, Double(length) < min {
            errors.append("\(path): length \(length) is shorter than minLength \(Int(min))")
        }
        if let max = s["maxLength"]?.doubleValue, Double(length) > max {
            errors.append("\(path): length \(length) is longer than maxLength \(Int(max))")
        }
        if let pattern = s["pattern"]?.stringValue {
            if let regex = try? NSRegularExpression(pattern: pattern) {
                let range = NSRange(string.startIndex..., in: string)
                if regex.firstMatch(in: string, range: range) == nil {
                    errors.append("\(path): \(JSONValue.string(string).shortDescription) does not match pattern \(pattern)")
                }
            } else {
                errors.append("\(path): pattern \(pattern) is not a valid regular expression")
            }
        }
        if let format = s["format"]?.stringValue, let problem = Self.formatViolation(format, .string(string)) {
            errors.append("\(path): \(JSONValue.string(string).shortDescription) is not a valid \(format)\(problem)")
        }
        return errors
    }

    private func checkNumber(_ value: JSONValue, _ s: [String: JSONValue], _ path: String) -> [String] {
        guard let x = value.doubleValue else { return [] }
        var errors: [String] = []
        let shown = value.description
        // 3.1 writes exclusive bounds as numbers; 3.0 wrote booleans that modify minimum/maximum.
        let minIsExclusive = s["exclusiveMinimum"] == .bool(true)
        let maxIsExclusive = s["exclusiveMaximum"] == .bool(true)
        if let min = s["minimum"] {
            if minIsExclusive, let m = min.doubleValue, x <= m { errors.append("\(path): \(shown) is not greater than \(min)") }
            if !minIsExclusive, Self.less(value, min) { errors.append("\(path): \(shown) is less than minimum \(min)") }
        }
        if let max = s["maximum"] {
            if maxIsExclusive, let m = max.doubleValue, x >= m { errors.append("\(path): \(shown) is not less than \(max)") }
            if !maxIsExclusive, Self.less(max, value) { errors.append("\(path): \(shown) is greater than maximum \(max)") }
        }
        if let bound = s["exclusiveMinimum"], let m = bound.doubleValue, x <= m {
            errors.append("\(path): \(shown) is not greater than exclusiveMinimum \(bound)")
        }
        if let bound = s["exclusiveMaximum"], let m = bound.doubleValue, x >= m {
            errors.append("\(path): \(shown) is not less than exclusiveMaximum \(bound)")
        }
        if let divisor = s["multipleOf"], let d = divisor.doubleValue, d > 0 {
            let quotient = x / d
            if !(quotient.isFinite && abs(quotient - quotient.rounded()) < 1e-9) {
                errors.append("\(path): \(shown) is not a multiple of \(divisor)")
            }
        }
        if let format = s["format"]?.stringValue, let problem = Self.formatViolation(format, value) {
            errors.append("\(path): \(shown) is not a valid \(format)\(problem)")
        }
        return errors
    }

    /// Exact for two integers (int64 ids near the limits), by double otherwise.
    private static func less(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if case .integer(let x) = a, case .integer(let y) = b { return x < y }
        guard let x = a.doubleValue, let y = b.doubleValue else { return false }
        return x < y
    }

    private func checkArray(_ items: [JSONValue], _ s: [String: JSONValue], _ path: String, refs: Set<RefVisit>) -> [String] {
        var errors: [String] = []
        if let min = s["minItems"]?.doubleValue, Double(items.count) < min {
            errors.append("\(path): \(items.count) items, fewer than minItems \(Int(min))")
        }
        if let max = s["maxItems"]?.doubleValue, Double(items.count) > max {
            errors.append("\(path): \(items.count) items, more than maxItems \(Int(max))")
        }
        if s["uniqueItems"] == .bool(true) {
            outer: for i in items.indices {
                for j in items.indices where j > i && items[i].jsonEquals(items[j]) {
                    errors.append("\(path): items \(i) and \(j) are equal but uniqueItems is true")
                    break outer
                }
            }
        }
        // `items` as an array is the pre-2020-12 tuple form; treat it like prefixItems.
        var prefix: [JSONValue] = s["prefixItems"]?.arrayValue ?? []
        var rest: JSONValue? = s["items"]
        if case .array(let tuple)? = rest {
            prefix = tuple
            rest = s["additionalItems"]
        }
        for (i, item) in items.enumerated() {
            let schema = i < prefix.count ? prefix[i] : rest
            if let schema { errors += check(item, schema, "\(path)[\(i)]", refs: refs).errors }
        }
        if let contains = s["contains"] {
            let count = items.enumerated().filter { check($1, contains, "\(path)[\($0)]", refs: refs).isValid }.count
            let min = s["minContains"]?.doubleValue ?? 1
            if Double(count) < min { errors.append("\(path): \(count) items match \"contains\", fewer than \(Int(min))") }
            if let max = s["maxContains"]?.doubleValue, Double(count) > max {
                errors.append("\(path): \(count) items match \"contains\", more than \(Int(max))")
            }
        }
        return errors
    }

    private func checkObjectMembers(
        _ members: [String: JSONValue], _ s: [String: JSONValue], _ path: String, refs: Set<RefVisit>, into out: inout Outcome
    ) {
        for name in (s["required"]?.arrayValue ?? []).compactMap(\.stringValue) where members[name] == nil {
            out.errors.append("\(path): missing required property \"\(name)\"")
        }
        if let min = s["minProperties"]?.doubleValue, Double(members.count) < min {
            out.errors.append("\(path): \(members.count) properties, fewer than minProperties \(Int(min))")
        }
        if let max = s["maxProperties"]?.doubleValue, Double(members.count) > max {
            out.errors.append("\(path): \(members.count) properties, more than maxProperties \(Int(max))")
        }
        for (name, needed) in (s["dependentRequired"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) where members[name] != nil {
            for other in (needed.arrayValue ?? []).compactMap(\.stringValue) where members[other] == nil {
                out.errors.append("\(path): property \"\(name)\" requires property \"\(other)\"")
            }
        }

        let properties = s["properties"]?.objectValue ?? [:]
        let patterns: [(NSRegularExpression, JSONValue)] = (s["patternProperties"]?.objectValue ?? [:])
            .sorted { $0.key < $1.key }
            .compactMap { key, schema in (try? NSRegularExpression(pattern: key)).map { ($0, schema) } }

        for key in members.keys.sorted() {
            let value = members[key]!
            let childPath = Self.child(path, key)
            if let nameSchema = s["propertyNames"] {
                for error in check(.string(key), nameSchema, childPath, refs: refs).errors {
                    out.errors.append("\(childPath): property name is invalid: \(error)")
                }
            }
            var matched = false
            if let schema = properties[key] {
                matched = true
                out.errors += check(value, schema, childPath, refs: refs).errors
            }
            for (regex, schema) in patterns where regex.firstMatch(in: key, range: NSRange(key.startIndex..., in: key)) != nil {
                matched = true
                out.errors += check(value, schema, childPath, refs: refs).errors
            }
            if matched {
                out.evaluated.insert(key)
            } else if let additional = s["additionalProperties"] {
                out.evaluated.insert(key)
                if additional == .bool(false) {
                    out.errors.append("\(childPath): unexpected property (additionalProperties is false)")
                } else {
                    out.errors += check(value, additional, childPath, refs: refs).errors
                }
            }
        }
    }

    private func checkApplicators(
        _ instance: JSONValue, _ s: [String: JSONValue], _ path: String, refs: Set<RefVisit>, into out: inout Outcome
    ) {
        for sub in s["allOf"]?.arrayValue ?? [] {
            let result = check(instance, sub, path, refs: refs)
            out.errors += result.errors
            out.evaluated.formUnion(result.evaluated)
        }

        if let branches = s["anyOf"]?.arrayValue {
            let results = branches.map { check(instance, $0, path, refs: refs) }
            if results.contains(where: \.isValid) {
                for result in results where result.isValid { out.evaluated.formUnion(result.evaluated) }
            } else {
                out.errors += explainNoMatch("anyOf", branches, results, instance, s, path)
            }
        }

        if let branches = s["oneOf"]?.arrayValue {
            let results = branches.map { check(instance, $0, path, refs: refs) }
            let passing = results.indices.filter { results[$0].isValid }
            if passing.count == 1 {
                out.evaluated.formUnion(results[passing[0]].evaluated)
            } else if passing.isEmpty {
                out.errors += explainNoMatch("oneOf", branches, results, instance, s, path)
            } else {
                let names = passing.map { Self.branchName(branches[$0], $0) }.joined(separator: ", ")
                out.errors.append("\(path): matches \(passing.count) oneOf alternatives (\(names)); exactly one must match")
            }
        }

        if let negated = s["not"], check(instance, negated, path, refs: refs).isValid {
            out.errors.append("\(path): must not match the \"not\" schema")
        }

        if let condition = s["if"] {
            let test = check(instance, condition, path, refs: refs)
            let branch = test.isValid ? s["then"] : s["else"]
            if test.isValid { out.evaluated.formUnion(test.evaluated) }
            if let branch {
                let result = check(instance, branch, path, refs: refs)
                out.errors += result.errors
                out.evaluated.formUnion(result.evaluated)
            }
        }
    }

    /// "Matches none of 4 alternatives" is useless on its own, so name the alternative the value was most
    /// likely meant to be (by discriminator, else fewest errors) and pass on its errors.
    private func explainNoMatch(
        _ keyword: String, _ branches: [JSONValue], _ results: [Outcome], _ instance: JSONValue, _ s: [String: JSONValue], _ path: String
    ) -> [String] {
        var closest: Int?
        if let property = s["discriminator"]?["propertyName"]?.stringValue, let tag = instance[property]?.stringValue {
            let target = s["discriminator"]?["mapping"]?[tag]?.stringValue
            closest = branches.indices.first { i in
                guard let ref = branches[i]["$ref"]?.stringValue else { return false }
                return ref == target || ref.hasSuffix("/\(tag)")
            }
        }
        let best = closest ?? results.indices.min { a, b in
            (results[a].wrongType ? 1 : 0, results[a].errors.count) < (results[b].wrongType ? 1 : 0, results[b].errors.count)
        }
        guard let best else { return ["\(path): \(keyword) has no alternatives"] }
        let header = "\(path): matches none of the \(branches.count) \(keyword) alternatives; closest is \(Self.branchName(branches[best], best)):"
        return [header] + results[best].errors.map { "  " + $0 }
    }

    private static func branchName(_ branch: JSONValue, _ index: Int) -> String {
        branch["$ref"]?.stringValue ?? "alternative \(index)"
    }

    /// `$.a.b`, `$["content-type"]`, `$[3]`: readable, and unambiguous for keys that are not identifiers.
    static func child(_ path: String, _ key: String) -> String {
        let isIdentifier = !key.isEmpty && key.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        } && !("0"..."9").contains(key.unicodeScalars.first!)
        return isIdentifier ? "\(path).\(key)" : "\(path)[\(JSONValue.string(key).description)]"
    }

    // MARK: - Formats

    /// Nil when `value` satisfies `format` (or the format is not checked); otherwise a short reason,
    /// starting with a separator, or empty.
    static func formatViolation(_ format: String, _ value: JSONValue) -> String? {
        switch (format, value) {
        case ("int32", .integer), ("int32", .number):
            guard value.isIntegral, let x = value.doubleValue else { return ": not an integer" }
            return x >= -2_147_483_648 && x <= 2_147_483_647 ? nil : ": outside the int32 range"
        case ("int64", .number):
            guard value.isIntegral, let x = value.doubleValue else { return ": not an integer" }
            return x >= -9.223_372_036_854_775_808e18 && x < 9.223_372_036_854_775_808e18 ? nil : ": outside the int64 range"
        case ("uuid", .string(let s)):
            return s.wholeMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) == nil ? "" : nil
        case ("date-time", .string(let s)): return isRFC3339DateTime(s) ? nil : " (RFC 3339)"
        case ("date", .string(let s)): return isFullDate(s) ? nil : " (RFC 3339 full-date)"
        case ("byte", .string(let s)):
            // Standard alphabet with padding: base64url or unpadded output is a different wire format.
            return s.wholeMatch(of: /(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=)?/) == nil ? " (padded base64)" : nil
        case ("uri", .string(let s)):
            return s.wholeMatch(of: /[A-Za-z][A-Za-z0-9+.\-]*:[A-Za-z0-9\-._~:\/?#\[\]@!$&'()*+,;=%]*/) == nil ? " (absolute URI)" : nil
        case ("email", .string(let s)):
            return s.wholeMatch(of: /[^@\s]+@[^@\s]+\.[^@\s]+/) == nil ? "" : nil
        case ("ipv4", .string(let s)):
            let parts = s.split(separator: ".", omittingEmptySubsequences: false)
            let ok = parts.count == 4 && parts.allSatisfy { p in
                p.count <= 3 && !(p.count > 1 && p.hasPrefix("0")) && UInt8(p) != nil && p.allSatisfy(\.isASCII)
            }
            return ok ? nil : ""
        default:
            return nil
        }
    }

    static func isFullDate(_ s: String) -> Bool {
        guard let m = s.wholeMatch(of: /([0-9]{4})-([0-9]{2})-([0-9]{2})/),
              let year = Int(m.1), let month = Int(m.2), let day = Int(m.3)
        else { return false }
        return (1...12).contains(month) && (1...daysIn(month: month, year: year)).contains(day)
    }

    static func isRFC3339DateTime(_ s: String) -> Bool {
        let pattern = /([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|[+\-]([0-9]{2}):([0-9]{2}))/
        guard let m = s.wholeMatch(of: pattern), isFullDate(String(m.1)),
              let hour = Int(m.2), let minute = Int(m.3), let second = Int(m.4)
        else { return false }
        let offsetOK = (m.5.map { Int($0)! < 24 } ?? true) && (m.6.map { Int($0)! < 60 } ?? true)
        // 60 admits a leap second.
        return hour < 24 && minute < 60 && second <= 60 && offsetOK
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

extension JSONValue {
    /// Resolves a local reference (`#/components/schemas/Rule`, RFC 6901 escapes and percent-encoding
    /// allowed). References into other documents are not supported and resolve to nil.
    func resolvePointer(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#") else { return nil }
        let pointer = String(reference.dropFirst()).removingPercentEncoding ?? String(reference.dropFirst())
        if pointer.isEmpty { return self }
        guard pointer.hasPrefix("/") else { return nil }
        var node = self
        for token in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch node {
            case .object(let members):
                guard let next = members[key] else { return nil }
                node = next
            case .array(let items):
                guard let i = Int(key), items.indices.contains(i) else { return nil }
                node = items[i]
            default:
                return nil
            }
        }
        return node
    }
}
