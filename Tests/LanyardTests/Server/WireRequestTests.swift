import Foundation
import LanyardCore
import LanyardWire
import Testing
@testable import LanyardServer

/// The SDK encodes the wire types with `WireCoding`; the server reads the same types from the strictly parsed
/// body. What one sends, the other must read as the same value.
@Suite struct WireRequestTests {
    func read<Body: RequestBody>(_ value: some Encodable, as type: Body.Type) throws -> Body {
        try Body(BodyFields(try JSONBody.members(of: Array(try WireCoding.encoder().encode(value)))))
    }

    @Test func whatTheSDKSendsTheServerReadsAsTheSameValue() throws {
        let full = SignInBody(idToken: "eyJ.eyJ.sig", nonce: "n-\u{00E9}", givenName: "Ada", familyName: "Lovelace",
                              authorizationCode: "c.0.abc")
        for body in [full, SignInBody(idToken: "eyJ.eyJ.sig")] {
            #expect(try read(body, as: SignInBody.self) == body)
        }
        for body in [ProviderTokenBody(idToken: "t", nonce: "n", authorizationCode: "c"), ProviderTokenBody(idToken: "t")] {
            #expect(try read(body, as: ProviderTokenBody.self) == body)
        }
        #expect(try read(RefreshBody(refreshToken: "rt_AAAA"), as: RefreshBody.self) == RefreshBody(refreshToken: "rt_AAAA"))
        for body in [SignOutBody()] + SignOutScope.allCases.map({ SignOutBody(scope: $0) }) {
            #expect(try read(body, as: SignOutBody.self) == body)
        }
        for body in [ProfileUpdate(displayName: "Ada"), ProfileUpdate(displayName: nil), .unchanged] {
            #expect(try read(body, as: ProfileUpdate.self) == body)
        }
    }

    /// `display_name: null` clears the name; leaving it out changes nothing. The two must stay apart on the wire.
    @Test func clearingTheNameAndLeavingItAloneAreDifferentBodies() throws {
        let clear = try WireCoding.encoder().encode(ProfileUpdate(displayName: nil))
        let unchanged = try WireCoding.encoder().encode(ProfileUpdate.unchanged)
        #expect(String(decoding: clear, as: UTF8.self) == #"{"display_name":null}"#)
        #expect(String(decoding: unchanged, as: UTF8.self) == "{}")
    }

    @Test func aScopeTheContractDoesNotNameIsAnInvalidRequestNamingIt() throws {
        let error = #expect(throws: LanyardError.self) {
            try SignOutBody(BodyFields(try JSONBody.members(of: Array(#"{"scope":"everywhere"}"#.utf8))))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.details["field"] == .string("scope"))
    }
}
