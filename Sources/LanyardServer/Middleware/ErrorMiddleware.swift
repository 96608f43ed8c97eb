import Foundation
import Hummingbird
import LanyardCore
import LanyardStore
import LanyardSupport
import Logging

/// Renders every error in the reference's one envelope with the request id. Anything not in the catalogue becomes
/// `INTERNAL_ERROR` with no internals in the message (they go to the log, never a token or key).
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = LanyardRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let catalogued = Self.catalogue(error, request: request)
            metrics.record(catalogued)
            Self.log(error, as: catalogued, logger: context.logger)
            return Self.response(for: catalogued, requestID: context.requestID)
        }
    }

    /// The log line for a failure on Lanyard's side: the error's type for a 500 (never its text, which may
    /// hold a token), the store's reason for a 503 (the database's own words, no query or values).
    static func log(_ error: any Error, as catalogued: LanyardError, logger: Logger) {
        switch catalogued.code {
        case .internalError:
            logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
        case .serviceUnavailable:
            logger.error("database unavailable", metadata: ["reason": "\(error)"])
        default:
            break
        }
    }

    static func catalogue(_ error: any Error, request: Request) -> LanyardError {
        switch error {
        case let error as LanyardError:
            return error
        case StoreError.unavailable:
            return .serviceUnavailable
        case let error as HTTPError:
            switch error.status {
            case .notFound: return .notFound("No route for \(request.method.rawValue) \(request.uri.path)")
            case .contentTooLarge: return .payloadTooLarge(limit: JSONBody.authLimit)
            case .badRequest: return .malformedJSON(error.body ?? "The request is malformed")
            default: return .internalError
            }
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return .payloadTooLarge(limit: JSONBody.authLimit)
        default:
            return .internalError
        }
    }

    struct Envelope: Encodable {
        struct Body: Encodable {
            let code: String
            let message: String
            let details: [String: JSONValue]
            let requestId: String

            enum CodingKeys: String, CodingKey {
                case code, message, details
                case requestId = "request_id"
            }
        }
        let error: Body
    }

    static func response(for error: LanyardError, requestID: String) -> Response {
        let envelope = Envelope(error: .init(code: error.code.rawValue, message: error.message, details: error.details,
                                             requestId: requestID))
        var headers: HTTPFields = [:]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if error.code == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        let status = HTTPResponse.Status(code: error.httpStatus)
        return (try? JSONResponse.make(envelope, status: status, headers: headers))
            ?? Response(status: .internalServerError)
    }
}
