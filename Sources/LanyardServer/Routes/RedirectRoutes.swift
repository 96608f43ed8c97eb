import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport
import LanyardWire

/// Redirect sign-in (reference section 23): `authorize` sends the browser to the provider (a `GET` navigation, or a
/// `POST` by an app holding a session, answered with the URL), the provider comes back to `callback` (Apple by
/// `form_post`), which sends the browser back to the app with Lanyard's code, and the app exchanges the code at
/// `token` with its PKCE verifier. Pages a browser sees (the authorize navigation's refusals, the callback's) are
/// HTML naming what went wrong; the app's own calls answer in the one error shape.
struct RedirectRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        // A sign-in counts once against the sign-in limit at its start and once at its exchange; the callback
        // (the provider's, only for a flow that exists) does not count.
        let limited = router.group("v1/auth").add(middleware: RateLimit(api, .signIn, per: .clientIP))
        limited.get("authorize/:provider", use: authorizePage)
        limited.group().add(middleware: BearerAuthentication(api, .optionalAllowingMergedGuest))
            .post("authorize/:provider", use: authorize)
        limited.group().add(middleware: BearerAuthentication(api, .optionalAllowingMergedGuest)).post("token", use: token)
        router.get("v1/auth/callback/:provider", use: callbackByQuery)
        router.post("v1/auth/callback/:provider", use: callbackByForm)
    }

    /// A browser navigation: 302 to the provider's page, or a page saying what is wrong (an unlisted redirect URI
    /// is named, never replaced by another address).
    @Sendable func authorizePage(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        return await Self.startPage(api, .init(
            provider: try context.parameters.require("provider"), redirectURI: query["redirect_uri"].map(String.init) ?? "",
            codeChallenge: query["code_challenge"].map(String.init) ?? "",
            codeChallengeMethod: query["code_challenge_method"].map(String.init) ?? "",
            state: query["state"].map(String.init)))
    }

    /// A flow started by a browser's navigation (here and GoTrue's `authorize`): the provider's page, or ours.
    static func startPage(_ api: APIContext, _ start: RedirectFlows.Start) async -> Response {
        do {
            let url = try await api.redirectFlows.start(start, caller: nil)
            return Response(status: .found, headers: [.location: url, .cacheControl: "no-store"])
        } catch let error as LanyardError {
            return page(error)
        } catch {
            return page(LanyardError.internalError)
        }
    }

    @Sendable func authorize(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(AuthorizeRequest.self, from: request)
        let url = try await api.redirectFlows.start(.init(
            provider: try context.parameters.require("provider"), redirectURI: body.redirectURI,
            codeChallenge: body.codeChallenge, codeChallengeMethod: body.codeChallengeMethod, state: body.state,
            intent: body.intent ?? "signin"), caller: context.caller)
        return try JSONResponse.make(AuthorizeResponse(url: url), headers: [.cacheControl: "no-store"])
    }

    @Sendable func callbackByQuery(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await callbackByQuery(request, provider: try context.parameters.require("provider"))
    }

    /// Apple answers by `form_post`: a cross-site POST carrying the code, the state and, once, the person's name.
    @Sendable func callbackByForm(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await callbackByForm(request, provider: try context.parameters.require("provider"))
    }

    /// The provider's answer in the query; `provider` is nil at GoTrue's callback, which names none.
    func callbackByQuery(_ request: Request, provider: String?) async throws -> Response {
        let query = request.uri.queryParameters
        return await callback(provider: provider, fields: Dictionary(
            query.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first }))
    }

    func callbackByForm(_ request: Request, provider: String?) async throws -> Response {
        await callback(provider: provider, fields: try await FormBody.read(request))
    }

    func callback(provider: String?, fields: [String: String]) async -> Response {
        guard let state = fields["state"], !state.isEmpty else {
            return Self.page(LanyardError.invalidRequest(field: "state", "The provider sent no state: start again from the app"))
        }
        do {
            switch try await api.redirectFlows.callback(provider: provider, state: state, code: fields["code"],
                                                        error: fields["error"], appleUser: fields["user"]) {
            case .redirect(let url):
                return Response(status: .found, headers: [.location: url, .cacheControl: "no-store"])
            }
        } catch let error as LanyardError {
            return Self.page(error)
        } catch {
            return Self.page(LanyardError.internalError)
        }
    }

    @Sendable func token(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(TokenRequest.self, from: request)
        let exchanged = try await api.redirectFlows.exchange(code: body.code, verifier: body.codeVerifier,
                                                             redirectURI: body.redirectURI, origin: "lanyard",
                                                             caller: context.caller, client: api.client(request, context))
        switch exchanged {
        case .session(let session): return JSONResponse.make(session)
        case .linked(let linked): return JSONResponse.make(linked)
        }
    }

    /// What a browser sees when the flow cannot go on: the error's message, its status.
    static func page(_ error: LanyardError) -> Response {
        let title = switch error.code {
        case .invalidRedirectURI: "This app's sign-in address is not allowed"
        case .providerUnavailable: "The sign-in provider cannot be reached"
        default: "This sign-in cannot go on"
        }
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" \
            content="width=device-width, initial-scale=1"><title>\(HTML.escape(title))</title>\
            <style>body{font:17px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d2330}\
            code{word-break:break-all}</style></head><body><h1>\(HTML.escape(title))</h1>\
            <p>\(HTML.escape(error.message))</p><p><small>\(error.code.rawValue)</small></p></body></html>
            """
        return Response(status: .init(code: error.httpStatus),
                        headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                                  .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

extension AuthorizeRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(redirectURI: try Field.nonEmpty(try fields.string("redirect_uri"), "redirect_uri", maximumLength: 2048),
                  codeChallenge: try Field.nonEmpty(try fields.string("code_challenge"), "code_challenge", maximumLength: 128),
                  codeChallengeMethod: try fields.optionalString("code_challenge_method") ?? "S256",
                  state: try Field.optional(try fields.optionalString("state"), "state", maximumLength: 512),
                  intent: try fields.optionalString("intent"))
    }
}

extension TokenRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        let grant = try fields.string("grant_type")
        guard grant == "authorization_code" else {
            throw LanyardError.invalidRequest(field: "grant_type", "grant_type must be authorization_code")
        }
        self.init(code: try Field.nonEmpty(try fields.string("code"), "code", maximumLength: 256),
                  codeVerifier: try Field.nonEmpty(try fields.string("code_verifier"), "code_verifier", maximumLength: 256),
                  redirectURI: try Field.nonEmpty(try fields.string("redirect_uri"), "redirect_uri", maximumLength: 2048),
                  grantType: grant)
    }
}
