import Foundation

/// Matches concrete request paths (`/v1/sessions/3f2b…/challenges?x=1`) against the spec's path templates
/// (`/v1/sessions/{sessionId}/challenges`). OpenAPI says concrete paths match before templated ones; we
/// apply that per segment, left to right, so `/v1/sessions/current` beats `/v1/sessions/{sessionId}`.
struct PathMatcher: Sendable {
    struct Match: Sendable, Equatable {
        let template: String
        /// Captured values, percent-decoded, keyed by parameter name.
        let parameters: [String: String]
    }

    enum Part: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    struct Template: Sendable {
        let text: String
        /// One entry per `/`-separated segment; a segment is usually one literal or one parameter,
        /// but templates like `/files/{name}.json` mix them.
        let segments: [[Part]]

        init(_ text: String) {
            self.text = text
            segments = PathMatcher.segments(of: text).map(Template.parts(of:))
        }

        var parameterNames: [String] {
            segments.flatMap { $0.compactMap { if case .parameter(let n) = $0 { n } else { nil } } }
        }

        /// 0 literal, 1 mixed, 2 whole-segment parameter: lower sorts first, i.e. wins.
        var rank: [Int] {
            segments.map { parts in
                if parts.allSatisfy({ if case .literal = $0 { true } else { false } }) { return 0 }
                if parts.count == 1, case .parameter = parts[0] { return 2 }
                return 1
            }
        }

        /// The template with parameter names erased: two templates with the same shape are ambiguous.
        var shape: String {
            "/" + segments.map { $0.map { if case .literal(let l) = $0 { l } else { "{}" } }.joined() }
                .joined(separator: "/")
        }

        static func parts(of segment: Substring) -> [Part] {
            var parts: [Part] = []
            var rest = segment[...]
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
                parts.append(.parameter(String(rest[rest.index(after: open)..<close])))
                rest = rest[rest.index(after: close)...]
            }
            if !rest.isEmpty || parts.isEmpty { parts.append(.literal(String(rest))) }
            return parts
        }

        func match(_ segments: [Substring]) -> [String: String]? {
            guard segments.count == self.segments.count else { return nil }
            var captured: [String: String] = [:]
            for (parts, segment) in zip(self.segments, segments) {
                guard Template.match(parts[...], segment, into: &captured) else { return nil }
            }
            return captured
        }

        /// Backtracking over the few parts of one segment; each parameter takes at least one character.
        private static func match(_ parts: ArraySlice<Part>, _ text: Substring, into captured: inout [String: String]) -> Bool {
            guard let first = parts.first else { return text.isEmpty }
            switch first {
            case .literal(let literal):
                guard text.hasPrefix(literal) else { return false }
                return match(parts.dropFirst(), text.dropFirst(literal.count), into: &captured)
            case .parameter(let name):
                guard !text.isEmpty else { return false }
                var end = text.index(after: text.startIndex)
                while true {
                    var attempt = captured
                    let value = text[..<end]
                    attempt[name] = value.removingPercentEncoding ?? String(value)
                    if match(parts.dropFirst(), text[end...], into: &attempt) {
                        captured = attempt
                        return true
                    }
                    if end == text.endIndex { return false }
                    end = text.index(after: end)
                }
            }
        }
    }

    let templates: [Template]

    init(templates: some Sequence<String>) {
        self.templates = templates.map(Template.init)
            .sorted { ($0.rank.lexicographicallyPrecedes($1.rank)) || ($0.rank == $1.rank && $0.text < $1.text) }
    }

    /// Every template the path fits, most specific first.
    func matches(_ path: String) -> [Match] {
        let segments = Self.segments(of: Self.pathOnly(path))
        return templates.compactMap { template in
            template.match(segments).map { Match(template: template.text, parameters: $0) }
        }
    }

    /// Drops scheme and authority (if a full URL was passed), the query and the fragment.
    static func pathOnly(_ target: String) -> String {
        var path = Substring(target)
        if let scheme = path.range(of: "://") {
            let afterAuthority = path[scheme.upperBound...]
            path = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        return String(path)
    }

    /// `/a/b` → ["a", "b"]; empty segments are kept so `/a//b` and `/a/` don't match `/a/b` or `/a`.
    static func segments(of path: String) -> [Substring] {
        let rooted = path.hasPrefix("/") ? path : "/" + path
        return Array(rooted.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
    }
}
