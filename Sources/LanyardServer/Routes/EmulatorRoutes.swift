import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardSupport

/// `/_emulator/*` (reference section 5), mounted only in dev mode.
struct EmulatorRoutes {
    let minter: TokenMinter

    func register(on router: Router<LanyardRequestContext>) {
        for provider in EmulatedProvider.allCases {
            router.get(RouterPath(stringLiteral: String(provider.keysPath.dropFirst()))) { _, _ in
                try JSONResponse.make(minter.jwks(for: provider), headers: [.cacheControl: "public, max-age=300"])
            }
        }
        router.post("_emulator/:provider/id-token") { request, context in
            guard let provider = EmulatedProvider(rawValue: context.parameters.get("provider") ?? "") else {
                throw LanyardError.unsupportedProvider(context.parameters.get("provider") ?? "")
            }
            let body = try await JSONBody.decode(MintRequest.self, from: request)
            guard !body.sub.isEmpty else { throw LanyardError.invalidRequest(field: "sub", "sub must not be empty") }
            return try JSONResponse.make(["id_token": try minter.mint(provider, body)])
        }
        router.get("_emulator") { _, _ in
            guard let url = Bundle.module.url(forResource: "emulator", withExtension: "html"),
                  let data = FileManager.default.contents(atPath: url.path) else {
                throw HTTPError(.notFound)
            }
            return JSONResponse.raw(data, contentType: "text/html; charset=utf-8")
        }
    }
}

extension MintRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(sub: try fields.string("sub"), email: try fields.optionalString("email"),
                  nonce: try fields.optionalString("nonce"), aud: try fields.optionalString("aud"),
                  name: try fields.optionalString("name"), emailVerified: try fields.optionalBool("email_verified"),
                  isPrivateEmail: try fields.optionalBool("is_private_email"),
                  expiresIn: try fields.optionalInteger("expires_in"), iss: try fields.optionalString("iss"),
                  iat: try fields.optionalInteger("iat"))
    }
}
