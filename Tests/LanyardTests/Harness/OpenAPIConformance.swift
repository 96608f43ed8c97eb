import Foundation
import LanyardSupport

/// Checks real answers against the OpenAPI document the server serves: the status is one the operation
/// declares, and the body matches the declared schema both ways: every required property is there with the
/// declared type, enum or const, and nothing is there that the schema does not declare (so a field the server
/// adds without documenting it fails as surely as one it drops).
///
/// The schema keywords the document uses are the ones read here: `$ref`, `type` (one or a list), `properties`,
/// `required`, `additionalProperties`, `items`, `enum`, `const`, `allOf`, `oneOf`, `format: date-time`.
struct OpenAPIConformance {
    let document: [String: JSONValue]

    init(_ body: Data) throws {
        guard case .object(let document) = try JSONParser.parse(Array(body)) else {
            throw TestSetupError("the OpenAPI document is not an object")
        }
        self.document = document
    }

    /// Every documented operation, as `METHOD /path/{template}`.
    var operations: Set<String> {
        var operations: Set<String> = []
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for method in (item.objectValue ?? [:]).keys where ["get", "put", "post", "patch", "delete"].contains(method) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
        return operations
    }

    /// The documented operation a request reached (`METHOD /path/{template}`): the template whose literal
    /// segments match, the most literal one first.
    func operation(method: String, path: String) -> String? {
        let segments = path.split(separator: "?").first.map { $0.split(separator: "/", omittingEmptySubsequences: false) } ?? []
        let candidates = (document["paths"]?.objectValue ?? [:]).keys.filter { template in
            let parts = template.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == segments.count else { return false }
            return zip(parts, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
        let best = candidates.max { a, b in a.filter { $0 == "{" }.count > b.filter { $0 == "{" }.count }
        guard let best, document["paths"]?.objectValue?[best]?.objectValue?[method.lowercased()] != nil else { return nil }
        return "\(method.uppercased()) \(best)"
    }

    /// What is wrong with this answer, as sentences; empty when it conforms.
    func problems(method: String, path: String, status: Int, body: Data, contentType: String?) -> [String] {
        guard let operation = operation(method: method, path: path) else {
            return ["\(method) \(path) is not a documented operation"]
        }
        let template = String(operation.split(separator: " ", maxSplits: 1)[1])
        let declared = document["paths"]?.objectValue?[template]?.objectValue?[method.lowercased()]?.objectValue
        guard var response = declared?["responses"]?.objectValue?[String(status)] ?? declared?["responses"]?.objectValue?["default"] else {
            return ["\(operation) answered \(status), which it does not declare"]
        }
        response = resolve(response)
        guard let schema = response.objectValue?["content"]?.objectValue?["application/json"]?.objectValue?["schema"] else {
            // A documented answer without a JSON body (204, an HTML page, Prometheus text).
            if contentType?.hasPrefix("application/json") == true, !body.isEmpty,
               response.objectValue?["content"] == nil {
                return ["\(operation) \(status) sends JSON that is not documented"]
            }
            return []
        }
        guard let value = try? JSONParser.parse(Array(body)) else {
            return ["\(operation) \(status): the body is not JSON"]
        }
        return check(value, against: schema, at: "\(operation) \(status) $")
    }

    private func resolve(_ value: JSONValue) -> JSONValue {
        guard let reference = value.objectValue?["$ref"]?.stringValue, reference.hasPrefix("#/") else { return value }
        var current: JSONValue = .object(document)
        for part in reference.dropFirst(2).split(separator: "/") {
            guard let next = current.objectValue?[String(part)] else { return value }
            current = next
        }
        return resolve(current)
    }

    private func check(_ value: JSONValue, against schemaValue: JSONValue, at path: String) -> [String] {
        guard let schema = resolve(schemaValue).objectValue else { return [] }
        var problems: [String] = []
        if let parts = schema["allOf"]?.arrayValue {
            // Each part's own rules, and properties checked against the union of every part's.
            for part in parts { problems += check(value, against: .object(Self.withoutClosure(resolve(part))), at: path) }
            let declared = parts.flatMap { (resolve($0).objectValue?["properties"]?.objectValue ?? [:]).keys }
            if case .object(let object) = value {
                for key in object.keys where !declared.contains(key) { problems.append("\(path).\(key) is not documented") }
            }
            return problems
        }
        if let choices = schema["oneOf"]?.arrayValue {
            // One of the alternatives must fit (an answer that is a session or a link's, say).
            let verdicts = choices.map { check(value, against: $0, at: path) }
            if verdicts.contains(where: \.isEmpty) { return [] }
            return ["\(path) fits none of the documented alternatives: "
                    + (verdicts.min { $0.count < $1.count } ?? []).joined(separator: "; ")]
        }
        if let types = Self.types(schema["type"]), !types.contains(where: { Self.matches(value, type: $0) }) {
            return ["\(path) is \(Self.describe(value)), documented as \(types.joined(separator: " or "))"]
        }
        if let allowed = schema["enum"]?.arrayValue, !allowed.contains(value) {
            problems.append("\(path) is \(Self.describe(value)), not one of the documented values")
        }
        if let constant = schema["const"], constant != value {
            problems.append("\(path) is \(Self.describe(value)), documented as always \(Self.describe(constant))")
        }
        if schema["format"]?.stringValue == "date-time", case .string(let text) = value, Self.dateTime(text) == nil {
            problems.append("\(path) is \"\(text)\", not an RFC 3339 date-time")
        }
        switch value {
        case .object(let object):
            let properties = schema["properties"]?.objectValue ?? [:]
            for required in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[required] == nil {
                problems.append("\(path).\(required) is required and missing")
            }
            for (key, member) in object {
                if let property = properties[key] {
                    problems += check(member, against: property, at: "\(path).\(key)")
                } else if let additional = schema["additionalProperties"], additional != .bool(false) {
                    if case .object = additional { problems += check(member, against: additional, at: "\(path).\(key)") }
                } else if schema["additionalProperties"] != nil || !properties.isEmpty {
                    problems.append("\(path).\(key) is not documented")
                }
            }
        case .array(let items):
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() { problems += check(item, against: itemSchema, at: "\(path)[\(index)]") }
            }
        default:
            break
        }
        return problems
    }

    /// An `allOf` part without its own verdict on undeclared properties: the union decides those.
    private static func withoutClosure(_ schema: JSONValue) -> [String: JSONValue] {
        var object = schema.objectValue ?? [:]
        object["additionalProperties"] = .bool(true)
        return object
    }

    private static func types(_ value: JSONValue?) -> [String]? {
        switch value {
        case .string(let type): [type]
        case .array(let types): types.compactMap(\.stringValue)
        default: nil
        }
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (value, type) {
        case (.null, "null"), (.bool, "boolean"), (.string, "string"), (.array, "array"), (.object, "object"), (.number, "number"):
            true
        case (.number(let number), "integer"):
            number.rounded() == number
        default:
            false
        }
    }

    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(let number): "\(number)"
        case .string(let text): "\"\(text.prefix(40))\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    private static func dateTime(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension JSONValue {
    var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }

    var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }
}
