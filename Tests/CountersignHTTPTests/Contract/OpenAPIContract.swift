import Foundation
import Yams

/// The service's OpenAPI document, loaded for tests. Routes are written by hand, so the HTTP tests hold
/// every response they see up against this: a violation means the code or the spec is wrong.
///
///     let contract = try OpenAPIContract.repository()
///     let problems = contract.validateResponse(method: "GET", path: "/v1/sessions/\(id)",
///                                              status: 200, contentType: "application/json", body: data)
///     #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
struct OpenAPIContract: Sendable {
    /// The whole document as JSON: `$ref`s are resolved against it lazily.
    let document: JSONValue
    let validator: SchemaValidator
    let matcher: PathMatcher

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    init(document: JSONValue) {
        self.document = document
        validator = SchemaValidator(root: document)
        matcher = PathMatcher(templates: document["paths"]?.objectValue?.keys.map { $0 } ?? [])
    }

    /// One operation of the spec, as found for a concrete request.
    struct Operation: Sendable {
        /// Upper case: `GET`.
        let method: String
        let pathTemplate: String
        let operationId: String?
        /// Path parameter values captured from the concrete path, percent-decoded.
        let pathParameters: [String: String]
        /// The Operation Object.
        let definition: JSONValue
        /// The Path Item Object it sits in (its `parameters` apply to the operation too).
        let pathItem: JSONValue
    }

    // MARK: - Loading

    static func load(path: String) throws(ContractError) -> OpenAPIContract {
        guard FileManager.default.fileExists(atPath: path) else { throw .specNotFound(path) }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw .unreadable(path, "\(error)") }
        return try load(yaml: text, source: path)
    }

    /// JSON is YAML, so this reads either.
    static func load(yaml text: String, source: String = "<inline>") throws(ContractError) -> OpenAPIContract {
        let node: Node?
        do { node = try Yams.compose(yaml: text, yaml12CoreResolver) } catch { throw .invalidYAML(source, "\(error)") }
        guard let node else { throw .invalidYAML(source, "empty document") }
        let document = try jsonValue(node, at: "", source: source)
        guard document["openapi"]?.stringValue != nil, document["paths"]?.objectValue != nil || document["webhooks"] != nil
        else { throw .notOpenAPI(source) }
        return OpenAPIContract(document: document)
    }

    /// The repository root: the nearest directory above `filePath` holding a Package.swift.
    static func repositoryRoot(from filePath: String = #filePath) -> String? {
        var directory = (URL(fileURLWithPath: filePath).standardizedFileURL.path as NSString).deletingLastPathComponent
        while true {
            if FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("Package.swift")) {
                return directory
            }
            let parent = (directory as NSString).deletingLastPathComponent
            if parent == directory || parent.isEmpty { return nil }
            directory = parent
        }
    }

    static func specPath(from filePath: String = #filePath) throws(ContractError) -> String {
        guard let root = repositoryRoot(from: filePath) else { throw .specNotFound("no Package.swift above \(filePath)") }
        return (root as NSString).appendingPathComponent("openapi.yaml")
    }

    /// The repository's openapi.yaml, parsed once per test process and shared by every test.
    static func repository() throws(ContractError) -> OpenAPIContract {
        try cachedRepositorySpec.get()
    }

    private static let cachedRepositorySpec = Result { () throws(ContractError) -> OpenAPIContract in
        try load(path: specPath())
    }

    /// YAML 1.2's core schema. Yams defaults to YAML 1.1, where `on`, `no` and `y` are booleans and
    /// `2024-01-01` is a timestamp: an `enum: [on, off]` or a date example would silently change type.
    private static let yaml12CoreResolver: Resolver = {
        // swiftlint:disable force_try
        Resolver.basic
            .appending(try! .init(.null, "^(?:~|null|Null|NULL|)$"))
            .appending(try! .init(.bool, "^(?:true|True|TRUE|false|False|FALSE)$"))
            .appending(try! .init(.int, "^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"))
            .appending(try! .init(.float, "^(?:[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))$"))
        // swiftlint:enable force_try
    }()

    private static func jsonValue(_ node: Node, at location: String, source: String) throws(ContractError) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            let text = scalar.string
            switch yaml12CoreResolver.resolveTag(of: node) {
            case .null: return .null
            case .bool: return .bool(text.lowercased() == "true")
            case .int:
                if let i = Int64(text.replacingOccurrences(of: "+", with: "")) { return .integer(i) }
                if text.hasPrefix("0x"), let i = Int64(text.dropFirst(2), radix: 16) { return .integer(i) }
                if text.hasPrefix("0o"), let i = Int64(text.dropFirst(2), radix: 8) { return .integer(i) }
                if let d = Double(text) { return .number(d) }
                throw .invalidYAML(source, "\(location): integer \(text) is out of range")
            case .float:
                guard let d = Double(text), d.isFinite else {
                    throw .invalidYAML(source, "\(location): \(text) has no JSON representation")
                }
                return .number(d)
            default:
                return .string(text)
            }
        case .sequence(let sequence):
            var items: [JSONValue] = []
            for (i, item) in sequence.enumerated() { items.append(try jsonValue(item, at: "\(location)[\(i)]", source: source)) }
            return .array(items)
        case .mapping(let mapping):
            var members: [String: JSONValue] = [:]
            for (keyNode, valueNode) in mapping {
                guard case .scalar(let key) = keyNode else {
                    throw .invalidYAML(source, "\(location): mapping keys must be scalars")
                }
                // A duplicate key is silently "last wins" in most loaders: in a spec it is always a mistake.
                guard members[key.string] == nil else {
                    throw .invalidYAML(source, "\(location): duplicate key \"\(key.string)\"")
                }
                let child = location.isEmpty ? key.string : SchemaValidator.child(location, key.string)
                members[key.string] = try jsonValue(valueNode, at: child, source: source)
            }
            return .object(members)
        case .alias:
            throw .invalidYAML(source, "\(location): unresolved alias")
        }
    }

    // MARK: - Operations

    /// Every operation in the spec, sorted by path then method: the list a route-coverage test walks.
    func operations() -> [(method: String, path: String, operationId: String?)] {
        allOperations().map { ($0.method, $0.pathTemplate, $0.operationId) }
    }

    func allOperations() -> [Operation] {
        let paths = document["paths"]?.objectValue ?? [:]
        return paths.keys.sorted().flatMap { template in
            let item = resolved(paths[template]!)
            return Self.methods.compactMap { method in
                item[method].map {
                    Operation(method: method.uppercased(), pathTemplate: template, operationId: $0["operationId"]?.stringValue,
                              pathParameters: [:], definition: $0, pathItem: item)
                }
            }
        }
    }

    /// The operation serving a concrete request path (query string ignored). Where several templates fit,
    /// the most specific one with this method wins: literal segments beat templated ones.
    func operation(method: String, path: String) -> Operation? {
        let key = method.lowercased()
        for match in matcher.matches(path) {
            let item = resolved(document["paths"]![match.template]!)
            if let definition = item[key] {
                return Operation(method: method.uppercased(), pathTemplate: match.template,
                                 operationId: definition["operationId"]?.stringValue,
                                 pathParameters: match.parameters, definition: definition, pathItem: item)
            }
        }
        return nil
    }

    private func missingOperation(_ method: String, _ path: String) -> String {
        let bare = PathMatcher.pathOnly(path)
        var message = "no operation \(method.uppercased()) \(bare) in openapi.yaml"
        if let template = matcher.matches(path).first?.template {
            let item = resolved(document["paths"]![template]!)
            let declared = Self.methods.filter { item[$0] != nil }.map { $0.uppercased() }
            message += " (\(template) declares \(declared.joined(separator: ", ")))"
        }
        return message
    }

    // MARK: - Responses

    /// Violations of the spec by one response; empty when it conforms.
    func validateResponse(method: String, path: String, status: Int, contentType: String?, body: Data) -> [String] {
        guard let operation = operation(method: method, path: path) else { return [missingOperation(method, path)] }
        let label = "\(operation.method) \(PathMatcher.pathOnly(path)) \(status)"
        let responses = operation.definition["responses"]?.objectValue ?? [:]
        guard let response = Self.response(for: status, in: responses).map(resolved) else {
            let declared = responses.keys.sorted().joined(separator: ", ")
            return ["\(label): status \(status) is not declared for \(operation.operationId ?? operation.pathTemplate) (declared: \(declared))"]
        }
        if let dangling = response["$ref"]?.stringValue { return ["\(label): response $ref \(dangling) does not resolve"] }
        // HEAD responses never carry a body, whatever the GET they mirror declares.
        if operation.method == "HEAD" { return [] }

        let content = response["content"]?.objectValue ?? [:]
        if content.isEmpty {
            return body.isEmpty ? [] : ["\(label): the response declares no content but the body has \(body.count) bytes"]
        }
        return validateContent(body, contentType: contentType, against: content, label: label)
    }

    /// Exact status, then its range (`4XX`), then `default`, as OpenAPI prescribes.
    static func response(for status: Int, in responses: [String: JSONValue]) -> JSONValue? {
        if let exact = responses[String(status)] { return exact }
        let range = "\(status / 100)XX"
        if let ranged = responses.first(where: { $0.key.uppercased() == range })?.value { return ranged }
        return responses["default"]
    }

    // MARK: - Requests

    /// Violations of the spec by a request a test is about to send: path and query parameters, and a JSON
    /// body against the requestBody schema. Only for requests meant to be valid.
    func validateRequest(method: String, path: String, body: Data?, contentType: String? = "application/json") -> [String] {
        guard let operation = operation(method: method, path: path) else { return [missingOperation(method, path)] }
        let label = "\(operation.method) \(PathMatcher.pathOnly(path)) request"
        var problems = validateParameters(of: operation, path: path, label: label)

        let body = body ?? Data()
        guard let requestBody = operation.definition["requestBody"].map(resolved) else {
            if !body.isEmpty { problems.append("\(label): has a body but the operation declares no requestBody") }
            return problems
        }
        if let dangling = requestBody["$ref"]?.stringValue { return problems + ["\(label): requestBody $ref \(dangling) does not resolve"] }
        if body.isEmpty {
            if requestBody["required"] == .bool(true) { problems.append("\(label): requestBody is required but the body is empty") }
            return problems
        }
        return problems + validateContent(body, contentType: contentType, against: requestBody["content"]?.objectValue ?? [:], label: label)
    }

    private func validateParameters(of operation: Operation, path: String, label: String) -> [String] {
        var query: [String: [String]] = [:]
        if let questionMark = path.firstIndex(of: "?") {
            let string = path[path.index(after: questionMark)...].prefix { $0 != "#" }
            for pair in string.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                    String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
                }
                query[parts[0], default: []].append(parts.count > 1 ? parts[1] : "")
            }
        }
        var problems: [String] = []
        for parameter in parameters(of: operation) {
            guard let name = parameter["name"]?.stringValue, let location = parameter["in"]?.stringValue else { continue }
            let values: [String]
            switch location {
            case "path": values = operation.pathParameters[name].map { [$0] } ?? []
            case "query": values = query[name] ?? []
            default: continue
            }
            if values.isEmpty {
                if parameter["required"] == .bool(true) { problems.append("\(label): missing required \(location) parameter \(name)") }
                continue
            }
            guard let schema = parameter["schema"] else { continue }
            let value = coerce(values, to: schema)
            problems += validator.validate(value, against: schema, at: "\(location) parameter \(name)").map { "\(label): \($0)" }
        }
        return problems
    }

    /// Path-item parameters overridden by operation parameters of the same name and location.
    func parameters(of operation: Operation) -> [JSONValue] {
        var byKey: [String: JSONValue] = [:]
        var order: [String] = []
        for raw in (operation.pathItem["parameters"]?.arrayValue ?? []) + (operation.definition["parameters"]?.arrayValue ?? []) {
            let parameter = resolved(raw)
            let key = "\(parameter["in"]?.stringValue ?? "?") \(parameter["name"]?.stringValue ?? "?")"
            if byKey[key] == nil { order.append(key) }
            byKey[key] = parameter
        }
        return order.map { byKey[$0]! }
    }

    /// Parameters travel as text; give them the JSON type their schema expects so it can judge them.
    private func coerce(_ values: [String], to schema: JSONValue) -> JSONValue {
        let schema = resolved(schema)
        let types = schema["type"]?.arrayValue?.compactMap(\.stringValue) ?? schema["type"]?.stringValue.map { [$0] } ?? []
        if types.contains("array") {
            let items = schema["items"] ?? .bool(true)
            let parts = values.count == 1 ? values[0].split(separator: ",").map(String.init) : values
            return .array(parts.map { coerce([$0], to: items) })
        }
        let text = values[0]
        if types.contains("integer"), let i = Int64(text) { return .integer(i) }
        if types.contains("number"), let d = Double(text), d.isFinite { return .number(d) }
        if types.contains("boolean"), text == "true" || text == "false" { return .bool(text == "true") }
        return .string(text)
    }

    // MARK: - Bodies

    private func validateContent(_ body: Data, contentType: String?, against content: [String: JSONValue], label: String) -> [String] {
        let declared = content.keys.sorted().joined(separator: ", ")
        guard let contentType else { return ["\(label): no Content-Type (declared: \(declared))"] }
        guard let key = Self.mediaTypeKey(for: contentType, in: content) else {
            return ["\(label): content type \(contentType) is not declared (declared: \(declared))"]
        }
        // Non-JSON bodies (text/plain metrics, say) are checked for their content type only; a body that
        // calls itself JSON must parse even where the spec gives no schema for it.
        guard Self.isJSON(key.hasSuffix("/*") ? contentType : key) else { return [] }
        let value: JSONValue
        do { value = try JSONValue.parse(body) } catch {
            let preview = String(decoding: body.prefix(120), as: UTF8.self)
            return ["\(label): body is not JSON (\(error)): \(preview)"]
        }
        guard let schema = content[key]?["schema"] else { return [] }
        return validator.validate(value, against: schema).map { "\(label): \($0)" }
    }

    /// The `content` key serving a media type: exact (parameters ignored), then `type/*`, then `*/*`.
    static func mediaTypeKey(for contentType: String, in content: [String: JSONValue]) -> String? {
        let wanted = essence(contentType)
        let keys = content.keys.sorted()
        return keys.first { essence($0) == wanted }
            ?? keys.first { essence($0) == wanted.split(separator: "/").first.map { "\($0)/*" } }
            ?? keys.first { $0 == "*/*" }
    }

    static func essence(_ mediaType: String) -> String {
        (mediaType.split(separator: ";").first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces).lowercased()
    }

    static func isJSON(_ mediaType: String) -> Bool {
        let e = essence(mediaType)
        return e == "application/json" || e.hasSuffix("+json")
    }

    // MARK: - Schemas

    /// Follows `$ref` chains of Reference Objects (responses, parameters, request bodies…) to the object.
    func resolved(_ value: JSONValue) -> JSONValue {
        var current = value
        var seen: Set<String> = []
        while let ref = current["$ref"]?.stringValue, seen.insert(ref).inserted, let target = document.resolvePointer(ref) {
            current = target
        }
        return current
    }

    /// `components.schemas[name]`, for tests that check a value against one schema.
    func schema(named name: String) -> JSONValue? {
        document["components"]?["schemas"]?[name]
    }

    func validate(_ value: JSONValue, against schema: JSONValue) -> [String] {
        validator.validate(value, against: schema)
    }

    func validate(json: Data, againstSchemaNamed name: String) -> [String] {
        guard schema(named: name) != nil else { return ["no schema \(name) in components.schemas"] }
        do {
            return validator.validate(try JSONValue.parse(json), against: .object(["$ref": .string("#/components/schemas/\(name)")]))
        } catch {
            return ["not JSON: \(error)"]
        }
    }
}

enum ContractError: Error, CustomStringConvertible {
    case specNotFound(String)
    case unreadable(String, String)
    case invalidYAML(String, String)
    case notOpenAPI(String)

    var description: String {
        switch self {
        case .specNotFound(let path): "OpenAPI spec not found: \(path)"
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .invalidYAML(let source, let reason): "\(source) is not valid YAML: \(reason)"
        case .notOpenAPI(let source): "\(source) is not an OpenAPI document (needs `openapi` and `paths`)"
        }
    }
}
