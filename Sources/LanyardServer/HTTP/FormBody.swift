import Hummingbird

/// An `application/x-www-form-urlencoded` body (an HTML form, a provider's `form_post`, an OAuth token request):
/// each name's first value, so a repeated name cannot override what came first.
enum FormBody {
    static func parse(_ text: String) -> [String: String] {
        var form: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            guard let name = parts.first, form[name] == nil else { continue }
            form[name] = parts.count > 1 ? parts[1] : ""
        }
        return form
    }

    static func read(_ request: Request, upTo limit: Int = 64 * 1024) async throws -> [String: String] {
        var request = request
        return parse(String(buffer: try await request.collectBody(upTo: limit)))
    }
}
