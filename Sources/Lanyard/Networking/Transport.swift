import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request to the API, before the bearer is added.
struct APIRequest: Sendable {
    var method: String
    var path: String
    var query: [URLQueryItem] = []
    var body: Data?
    var headers: [String: String] = [:]

    init(_ method: String, _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }

    init(_ method: String, _ path: String, json: some Encodable, headers: [String: String] = [:]) throws {
        self.init(method, path, headers: headers)
        body = try WireCoding.encoder().encode(json)
    }
}

/// Sends requests to the server and turns its answers into values or `LanyardError`s. Knows nothing of sessions.
struct Transport: Sendable {
    let baseURL: URL
    let session: URLSession
    let timeout: TimeInterval

    /// Sends `request` and decodes a 2xx answer as `Response`.
    func send<Response: Decodable>(_ request: APIRequest, bearer: String?, as: Response.Type) async throws -> Response {
        try Self.decode(try await send(request, bearer: bearer))
    }

    /// A 2xx answer's body as `Response`; `.invalidResponse` when it is not what the API sends.
    static func decode<Response: Decodable>(_ data: Data) throws -> Response {
        do {
            return try WireCoding.decoder().decode(Response.self, from: data)
        } catch {
            throw LanyardError.invalidResponse(status: 200)
        }
    }

    /// Sends `request`; the body of a 2xx answer, or the error the answer stands for.
    @discardableResult
    func send(_ request: APIRequest, bearer: String?) async throws -> Data {
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: urlRequest(request, bearer: bearer))
        } catch let error as URLError {
            throw LanyardError.network(error)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw LanyardError.network(URLError(.unknown))
        }
        guard let http = response as? HTTPURLResponse else { throw LanyardError.invalidResponse(status: 0) }
        if let error = LanyardError.decode(status: http.statusCode, body: data, headers: http.allHeaderFields) {
            throw error
        }
        return data
    }

    /// Names the SDK and its version to the server, as Supabase's clients do.
    static let clientInfo = "lanyard-swift/\(LanyardVersion.current)"

    func urlRequest(_ request: APIRequest, bearer: String?) -> URLRequest {
        var components = URLComponents(url: baseURL.appendingPathComponent(request.path), resolvingAgainstBaseURL: false)!
        if !request.query.isEmpty { components.queryItems = request.query }
        var urlRequest = URLRequest(url: components.url!, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue(Self.clientInfo, forHTTPHeaderField: "X-Client-Info")
        if request.body != nil { urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let bearer { urlRequest.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }
}
