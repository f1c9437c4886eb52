import Foundation

/// Consistency checks on the spec itself, run in CI next to the route tests: a spec whose references
/// dangle or whose examples contradict their schemas misleads every client written from it.
extension OpenAPIContract {
    func lint() -> [String] {
        var problems: [String] = []
        if let version = document["openapi"]?.stringValue, !version.hasPrefix("3.1.") {
            problems.append("openapi: \(version) is not 3.1.x")
        }
        for key in ["title", "version"] where document["info"]?[key]?.stringValue == nil {
            problems.append("info.\(key) is missing")
        }
        lintSecurity(document["security"], at: "security", into: &problems)
        lintReferences(document, at: "", context: .node, into: &problems)
        lintPaths(into: &problems)
        lintComponents(into: &problems)
        return problems
    }

    // MARK: - References

    private enum WalkContext {
        case node
        case namedMap(String)
        case exampleObject
    }

    /// Maps whose keys are names chosen by the author, so a property called `default` or `example`
    /// is walked, not mistaken for the keyword.
    private static let namedMaps: Set<String> = [
        "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "paths", "webhooks",
        "schemas", "responses", "parameters", "requestBodies", "headers", "securitySchemes", "links", "callbacks",
        "pathItems", "content", "encoding", "examples",
    ]

    /// Values that are data, not spec: a `$ref` key inside an example is just a member of the example.
    private static let dataKeys: Set<String> = ["example", "examples", "const", "enum", "default", "value"]

    private func lintReferences(_ value: JSONValue, at location: String, context: WalkContext, into problems: inout [String]) {
        switch value {
        case .array(let items):
            for (i, item) in items.enumerated() { lintReferences(item, at: "\(location)[\(i)]", context: .node, into: &problems) }
        case .object(let members):
            for key in members.keys.sorted() {
                let child = Self.child(location, key)
                let member = members[key]!
                switch context {
                case .namedMap(let kind):
                    lintReferences(member, at: child, context: kind == "examples" ? .exampleObject : .node, into: &problems)
                case .exampleObject where key != "$ref":
                    continue
                case .node, .exampleObject:
                    if key == "$ref" {
                        lintReference(member, at: child, into: &problems)
                    } else if key == "examples", member.objectValue != nil {
                        // A map of Example Objects (media types, parameters); a schema's `examples` is an array of data.
                        lintReferences(member, at: child, context: .namedMap("examples"), into: &problems)
                    } else if Self.dataKeys.contains(key) {
                        continue
                    } else if Self.namedMaps.contains(key), member.objectValue != nil {
                        lintReferences(member, at: child, context: .namedMap(key), into: &problems)
                    } else {
                        lintReferences(member, at: child, context: .node, into: &problems)
                    }
                }
            }
        default:
            break
        }
    }

    private func lintReference(_ ref: JSONValue, at location: String, into problems: inout [String]) {
        guard let ref = ref.stringValue else { return problems.append("\(location): $ref must be a string") }
        guard ref.hasPrefix("#") else {
            return problems.append("\(location): $ref \(ref) points outside this document; the contract checker only follows local references")
        }
        var seen: Set<String> = [ref]
        var target = document.resolvePointer(ref)
        while let next = target?["$ref"]?.stringValue, target?.objectValue?.count == 1 {
            guard seen.insert(next).inserted else { return problems.append("\(location): $ref \(ref) is a circular chain of references") }
            target = document.resolvePointer(next)
        }
        if target == nil { problems.append("\(location): $ref \(ref) does not resolve") }
    }

    // MARK: - Paths and operations

    private static let pathItemKeys: Set<String> = Set(methods).union(["$ref", "summary", "description", "servers", "parameters"])

    private func lintPaths(into problems: inout [String]) {
        let paths = document["paths"]?.objectValue ?? [:]
        var shapes: [String: String] = [:]
        for template in paths.keys.sorted() {
            let location = Self.child("paths", template)
            if !template.hasPrefix("/") { problems.append("\(location): a path must start with /") }
            let shape = PathMatcher.Template(template).shape
            if let other = shapes[shape] {
                problems.append("\(location): same path as \(other) with other parameter names; requests cannot tell them apart")
            }
            shapes[shape] = template
            let item = resolved(paths[template]!)
            for key in (item.objectValue ?? [:]).keys.sorted() where !Self.pathItemKeys.contains(key) && !key.hasPrefix("x-") {
                problems.append("\(location): unknown key \(key) (not an HTTP method OpenAPI knows)")
            }
            lintParameterList(item["parameters"], at: Self.child(location, "parameters"), into: &problems)
        }

        var operationIds: [String: String] = [:]
        for operation in allOperations() {
            let label = "\(operation.method) \(operation.pathTemplate)"
            let location = Self.child(Self.child("paths", operation.pathTemplate), operation.method.lowercased())
            if let id = operation.operationId {
                if let other = operationIds[id] { problems.append("\(label): operationId \(id) is also used by \(other)") }
                operationIds[id] = label
            } else {
                problems.append("\(label): no operationId")
            }
            lintPathParameters(operation, label: label, into: &problems)
            lintSecurity(operation.definition["security"], at: Self.child(location, "security"), into: &problems)
            lintParameterList(operation.definition["parameters"], at: Self.child(location, "parameters"), into: &problems)

            if let body = operation.definition["requestBody"], body["$ref"] == nil {
                lintContent(body["content"], at: Self.child(Self.child(location, "requestBody"), "content"), into: &problems)
            }
            guard let responses = operation.definition["responses"]?.objectValue, !responses.isEmpty else {
                problems.append("\(label): no responses")
                continue
            }
            for status in responses.keys.sorted() {
                let at = Self.child(Self.child(location, "responses"), status)
                if status != "default", Int(status).map({ (100...599).contains($0) }) != true,
                   status.uppercased().wholeMatch(of: /[1-5]XX/) == nil {
                    problems.append("\(at): \(status) is not a status code, range or default")
                }
                if responses[status]!["$ref"] == nil { lintResponse(responses[status]!, at: at, into: &problems) }
            }
        }
    }

    /// A requirement naming an undefined scheme is silently unsatisfiable for generated clients.
    private func lintSecurity(_ requirements: JSONValue?, at location: String, into problems: inout [String]) {
        let schemes = document["components"]?["securitySchemes"]?.objectValue ?? [:]
        for (i, requirement) in (requirements?.arrayValue ?? []).enumerated() {
            for name in (requirement.objectValue ?? [:]).keys.sorted() where schemes[name] == nil {
                problems.append("\(location)[\(i)]: security scheme \(name) is not defined in components.securitySchemes")
            }
        }
    }

    private func lintPathParameters(_ operation: Operation, label: String, into problems: inout [String]) {
        let inTemplate = PathMatcher.Template(operation.pathTemplate).parameterNames
        let declared = parameters(of: operation).filter { $0["in"]?.stringValue == "path" }
        let declaredNames = declared.compactMap { $0["name"]?.stringValue }
        for name in inTemplate where !declaredNames.contains(name) {
            problems.append("\(label): path parameter \(name) is not declared in parameters")
        }
        for parameter in declared {
            let name = parameter["name"]?.stringValue ?? "?"
            if !inTemplate.contains(name) { problems.append("\(label): declares path parameter \(name), which is not in the path") }
            if parameter["required"] != .bool(true) { problems.append("\(label): path parameter \(name) must have required: true") }
        }
    }

    private func lintParameterList(_ list: JSONValue?, at location: String, into problems: inout [String]) {
        var seen: Set<String> = []
        for (i, raw) in (list?.arrayValue ?? []).enumerated() {
            let parameter = resolved(raw)
            let key = "\(parameter["in"]?.stringValue ?? "?") \(parameter["name"]?.stringValue ?? "?")"
            if !seen.insert(key).inserted { problems.append("\(location): parameter \(key) is declared twice") }
            if raw["$ref"] == nil { lintParameter(raw, at: "\(location)[\(i)]", into: &problems) }
        }
    }

    private func lintParameter(_ parameter: JSONValue, at location: String, into problems: inout [String]) {
        for key in ["name", "in"] where parameter[key]?.stringValue == nil {
            problems.append("\(location): parameter has no \(key)")
        }
        if let schema = parameter["schema"] {
            lintSchema(schema, at: Self.child(location, "schema"), into: &problems)
            lintExamples(of: parameter, against: schema, at: location, into: &problems)
        }
        lintContent(parameter["content"], at: Self.child(location, "content"), into: &problems)
    }

    private func lintResponse(_ response: JSONValue, at location: String, into problems: inout [String]) {
        if response["description"]?.stringValue == nil { problems.append("\(location): response has no description") }
        lintContent(response["content"], at: Self.child(location, "content"), into: &problems)
        for (name, header) in (response["headers"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) where header["$ref"] == nil {
            lintParameter(header.merging(["name": .string(name), "in": .string("header")]), at: Self.child(Self.child(location, "headers"), name), into: &problems)
        }
    }

    private func lintContent(_ content: JSONValue?, at location: String, into problems: inout [String]) {
        for (mediaType, media) in (content?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let at = Self.child(location, mediaType)
            guard let schema = media["schema"] else {
                // Without a schema the tests can only check that the body is JSON, not what it says.
                if Self.isJSON(mediaType) { problems.append("\(at): JSON content without a schema") }
                continue
            }
            lintSchema(schema, at: Self.child(at, "schema"), into: &problems)
            lintExamples(of: media, against: schema, at: at, into: &problems)
        }
    }

    /// `example` and the `examples` map of a media type, parameter or header, against its schema.
    private func lintExamples(of holder: JSONValue, against schema: JSONValue, at location: String, into problems: inout [String]) {
        if let example = holder["example"] {
            problems += validator.validate(example, against: schema).map { "\(Self.child(location, "example")): \($0)" }
        }
        if holder["example"] != nil, holder["examples"] != nil {
            problems.append("\(location): has both example and examples; OpenAPI allows one")
        }
        for (name, raw) in (holder["examples"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let exampleObject = resolved(raw)
            let at = Self.child(Self.child(location, "examples"), name)
            if let value = exampleObject["value"] {
                problems += validator.validate(value, against: schema).map { "\(at): \($0)" }
            } else if exampleObject["externalValue"] == nil {
                problems.append("\(at): example has neither value nor externalValue")
            }
        }
    }

    // MARK: - Components

    private func lintComponents(into problems: inout [String]) {
        let components = document["components"]
        for (name, schema) in sortedMembers(components?["schemas"]) {
            lintSchema(schema, at: Self.child("components.schemas", name), into: &problems)
        }
        for (name, response) in sortedMembers(components?["responses"]) where response["$ref"] == nil {
            lintResponse(response, at: Self.child("components.responses", name), into: &problems)
        }
        for (name, parameter) in sortedMembers(components?["parameters"]) where parameter["$ref"] == nil {
            lintParameter(parameter, at: Self.child("components.parameters", name), into: &problems)
        }
        for (name, header) in sortedMembers(components?["headers"]) where header["$ref"] == nil {
            lintParameter(header.merging(["name": .string(name), "in": .string("header")]), at: Self.child("components.headers", name), into: &problems)
        }
        for (name, body) in sortedMembers(components?["requestBodies"]) where body["$ref"] == nil {
            lintContent(body["content"], at: Self.child("components.requestBodies", name) + ".content", into: &problems)
        }
    }

    private func sortedMembers(_ value: JSONValue?) -> [(String, JSONValue)] {
        (value?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    // MARK: - Schemas

    private static let jsonTypes: Set<String> = ["null", "boolean", "object", "array", "number", "string", "integer"]

    /// Lints one schema and its inline subschemas; `$ref` targets are linted where they are defined.
    private func lintSchema(_ schema: JSONValue, at location: String, into problems: inout [String]) {
        guard let s = schema.objectValue else {
            if schema.boolValue == nil { problems.append("\(location): a schema must be an object or a boolean") }
            return
        }
        let is31 = document["openapi"]?.stringValue?.hasPrefix("3.1") ?? false
        for key in s.keys.sorted() where !SchemaValidator.knownKeywords.contains(key) && !key.hasPrefix("x-") {
            if s[key] == .null {
                // `{description: Trust anchors, PEM.}` parses as a description plus a key "PEM.".
                problems.append("\(location): stray key \(key) with no value; a comma inside an unquoted flow-style string? Quote the string")
            } else {
                problems.append("\(location): unsupported keyword \(key) (the contract checker would not enforce it)")
            }
        }
        let types = s["type"].map { $0.arrayValue ?? [$0] } ?? []
        for type in types where !(type.stringValue.map(Self.jsonTypes.contains) ?? false) {
            problems.append("\(location): unknown type \(type)")
        }
        if is31, s["nullable"] != nil {
            problems.append("\(location): nullable is OpenAPI 3.0; in 3.1 write type: [..., \"null\"] (3.1 tools ignore nullable)")
        }
        if is31, s["exclusiveMinimum"]?.boolValue != nil || s["exclusiveMaximum"]?.boolValue != nil {
            problems.append("\(location): boolean exclusiveMinimum/exclusiveMaximum is OpenAPI 3.0; in 3.1 they are numbers")
        }
        if let pattern = s["pattern"] {
            if pattern.stringValue.flatMap({ try? NSRegularExpression(pattern: $0) }) == nil {
                problems.append("\(location): pattern \(pattern) is not a valid regular expression")
            }
        }
        for key in (s["patternProperties"]?.objectValue ?? [:]).keys.sorted() where (try? NSRegularExpression(pattern: key)) == nil {
            problems.append("\(location): patternProperties key \(key) is not a valid regular expression")
        }
        if let required = s["required"] {
            let names = required.arrayValue?.compactMap(\.stringValue)
            if names == nil || names!.count != required.arrayValue!.count {
                problems.append("\(location): required must be an array of property names")
            }
            // With no other way in, a required property missing from `properties` can never be present.
            let closed = s["additionalProperties"] == .bool(false) && s["patternProperties"] == nil
                && s["allOf"] == nil && s["anyOf"] == nil && s["oneOf"] == nil && s["$ref"] == nil
            let properties = s["properties"]?.objectValue ?? [:]
            for name in names ?? [] where closed && properties[name] == nil {
                problems.append("\(location): required property \(name) is not in properties, and additionalProperties is false")
            }
        }
        if let values = s["enum"] {
            if values.arrayValue?.isEmpty != false { problems.append("\(location): enum must be a non-empty array") }
            for (i, value) in (values.arrayValue ?? []).enumerated() {
                problems += validator.validate(value, against: schema).map { "\(location).enum[\(i)]: \($0)" }
            }
        }
        if let mapping = s["discriminator"]?["mapping"]?.objectValue {
            for (tag, ref) in mapping.sorted(by: { $0.key < $1.key }) where ref.stringValue.flatMap(document.resolvePointer) == nil {
                problems.append("\(location): discriminator mapping \(tag) → \(ref) does not resolve")
            }
        }

        // The examples are documentation clients copy: each must be a value the schema accepts.
        if let example = s["example"] {
            problems += validator.validate(example, against: schema).map { "\(location).example: \($0)" }
        }
        for (i, example) in (s["examples"]?.arrayValue ?? []).enumerated() {
            problems += validator.validate(example, against: schema).map { "\(location).examples[\(i)]: \($0)" }
        }
        if let value = s["default"] {
            problems += validator.validate(value, against: schema).map { "\(location).default: \($0)" }
        }

        for key in ["items", "additionalProperties", "unevaluatedProperties", "not", "if", "then", "else", "contains", "propertyNames", "additionalItems"] {
            if let sub = s[key], sub.arrayValue == nil { lintSchema(sub, at: Self.child(location, key), into: &problems) }
        }
        for key in ["allOf", "anyOf", "oneOf", "prefixItems", "items"] {
            for (i, sub) in (s[key]?.arrayValue ?? []).enumerated() { lintSchema(sub, at: "\(Self.child(location, key))[\(i)]", into: &problems) }
        }
        for key in ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] {
            for (name, sub) in sortedMembers(s[key]) { lintSchema(sub, at: Self.child(Self.child(location, key), name), into: &problems) }
        }
    }

    private static func child(_ location: String, _ key: String) -> String {
        location.isEmpty ? key : SchemaValidator.child(location, key)
    }
}

private extension JSONValue {
    func merging(_ extra: [String: JSONValue]) -> JSONValue {
        .object((objectValue ?? [:]).merging(extra) { current, _ in current })
    }
}
