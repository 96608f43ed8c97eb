import Foundation
import LanyardSupport
import LanyardWire
import Testing

/// Passkeys end to end (reference section 19), on both databases: a software authenticator that signs for real
/// registers and signs in through HTTP; each way it can misbehave is refused for its own reason, and nothing of a
/// refused ceremony is stored.
@Suite struct PasskeyTests {
    static let key = "passkey-test-admin-key-0123456789abcdef"

    static func configure(_ configuration: inout LanyardConfiguration) {
        configuration.adminKey = key
    }

    static func authenticator(_ server: TestServer, counts: Bool = true, backedUp: Bool = false) -> SoftwareAuthenticator {
        let port = URLComponents(string: server.baseURL)?.port ?? 0
        return SoftwareAuthenticator(origin: "http://localhost:\(port)", counts: counts, backedUp: backedUp)
    }

    static func json(_ value: some Encodable) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value)) as? [String: Any] ?? [:]
    }

    static func registrationOptions(_ server: TestServer, _ bearer: String) async throws -> PublicKeyCredentialCreationOptionsJSON {
        let answer = try await server.post("/v1/auth/passkeys/register/options", bearer: bearer)
        guard answer.status == 200 else { throw TestSetupError("register/options: \(answer.status) \(answer.text)") }
        return try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: answer.body)
    }

    static func signInOptions(_ server: TestServer) async throws -> PublicKeyCredentialRequestOptionsJSON {
        let answer = try await server.post("/v1/auth/passkeys/signin/options")
        guard answer.status == 200 else { throw TestSetupError("signin/options: \(answer.status) \(answer.text)") }
        return try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self, from: answer.body)
    }

    static func register(_ server: TestServer, _ credential: RegistrationResponseJSON, name: String? = nil,
                         bearer: String) async throws -> TestResponse {
        var body: [String: Any] = ["credential": try json(credential)]
        if let name { body["name"] = name }
        return try await server.post("/v1/auth/passkeys/register", body, bearer: bearer)
    }

    static func signIn(_ server: TestServer, _ assertion: AuthenticationResponseJSON, intent: String? = nil,
                       bearer: String? = nil) async throws -> TestResponse {
        var body: [String: Any] = ["credential": try json(assertion)]
        if let intent { body["intent"] = intent }
        return try await server.post("/v1/auth/passkeys/signin", body, bearer: bearer)
    }

    /// A new passkey on the account: options, the authenticator, registration.
    static func addPasskey(_ server: TestServer, _ authenticator: SoftwareAuthenticator, bearer: String,
                           name: String? = nil, rsa: Bool = false) async throws -> TestResponse {
        let options = try await registrationOptions(server, bearer)
        return try await register(server, try authenticator.create(options, rsa: rsa), name: name, bearer: bearer)
    }

    static func passkeys(_ server: TestServer, _ bearer: String) async throws -> [[String: Any]] {
        try await server.get("/v1/users/me/passkeys", bearer: bearer).json["passkeys"] as? [[String: Any]] ?? []
    }

    @Test(arguments: TestDatabase.available)
    func aPasskeyIsRegisteredSignsInAndIsListedRenamedAndRemoved(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.google, sub: "ada", email: "ada@example.com")
            let options = try await Self.registrationOptions(server, ada.accessToken)
            #expect(options.rp.id == "localhost")
            #expect(options.authenticatorSelection.residentKey == "required")
            #expect(options.authenticatorSelection.userVerification == "required")
            #expect(options.pubKeyCredParams.map(\.alg) == [-7, -257])
            #expect(options.attestation == "none" && options.excludeCredentials.isEmpty)
            #expect(Base64URL.decode(options.user.id)?.count == 32 && options.user.name == "ada@example.com")

            let phone = Self.authenticator(server)
            let registered = try await Self.register(server, try phone.create(options), name: "Ada's iPhone", bearer: ada.accessToken)
            #expect(registered.status == 201, "\(registered.text)")
            #expect(registered.json["linked_providers"] as? [String] == ["google", "passkey"])
            let passkey = registered.json["passkey"] as? [String: Any] ?? [:]
            #expect(passkey["name"] as? String == "Ada's iPhone" && passkey["backed_up"] as? Bool == false)
            let passkeyID = try #require(passkey["id"] as? String)

            // A second, RSA, passkey: the options leave the first out, and the same handle names the account.
            let second = try await Self.registrationOptions(server, ada.accessToken)
            #expect(second.excludeCredentials.map(\.id) == [Base64URL.encode(phone.credentials[0].id)])
            #expect(second.user.id == options.user.id)
            let key = Self.authenticator(server)
            #expect(try await Self.register(server, try key.create(second, rsa: true), bearer: ada.accessToken).status == 201)
            #expect(try await Self.passkeys(server, ada.accessToken).map { $0["name"] as? String } == ["Ada's iPhone", "Passkey"])

            // Discoverable sign-in with each: the same account, and the passkey records its use.
            for authenticator in [phone, key] {
                let signedIn = try Session(try await Self.signIn(server, try authenticator.get(try await Self.signInOptions(server))))
                #expect(signedIn.userID == ada.userID && !signedIn.isNewUser)
            }
            let listed = try await Self.passkeys(server, ada.accessToken)
            #expect(listed.allSatisfy { $0["last_used_at"] is String })

            // Renamed; then removed (a recent sign-in), leaving Google and the other passkey.
            let renamed = try await server.request(.PATCH, "/v1/users/me/passkeys/\(passkeyID)", json: ["name": "Work phone"],
                                                   bearer: ada.accessToken)
            #expect(renamed.status == 200 && renamed.json["name"] as? String == "Work phone", "\(renamed.text)")
            #expect(try await server.request(.PATCH, "/v1/users/me/passkeys/\(passkeyID)", json: ["name": "  "],
                                             bearer: ada.accessToken).errorCode == "INVALID_REQUEST")
            let removed = try await server.delete("/v1/users/me/passkeys/\(passkeyID)", bearer: ada.accessToken)
            #expect(removed.status == 200 && removed.json["linked_providers"] as? [String] == ["google", "passkey"], "\(removed.text)")
            #expect(try await server.delete("/v1/users/me/passkeys/\(passkeyID)", bearer: ada.accessToken).status == 404)
            // The removed passkey signs no one in.
            let gone = try await Self.signIn(server, try phone.get(try await Self.signInOptions(server)))
            #expect(gone.status == 401 && gone.errorCode == "INVALID_PASSKEY" && gone.errorReason == "unknown_credential")
            // Unlinking "passkey" as a provider is refused: they go one at a time.
            #expect(try await server.delete("/v1/auth/link/passkey", bearer: ada.accessToken).errorCode == "INVALID_REQUEST")
            // Another account cannot see, rename or remove Ada's.
            let grace = try await server.signIn(.google, sub: "grace")
            let keyID = try #require(try await Self.passkeys(server, ada.accessToken).first?["id"] as? String)
            #expect(try await server.delete("/v1/users/me/passkeys/\(keyID)", bearer: grace.accessToken).status == 404)
            #expect(try await Self.passkeys(server, grace.accessToken).isEmpty)

            // Removal needs a recent sign-in (10 minutes; the access token lives 15).
            server.clock.advance(by: 601)
            #expect(try await server.delete("/v1/users/me/passkeys/\(keyID)", bearer: ada.accessToken).errorCode == "REAUTHENTICATION_REQUIRED")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestWhoRegistersAPasskeyIsUpgradedInPlaceAndItsOnlyPasskeyStays(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let guest = try await server.anonymous()
            let phone = Self.authenticator(server, counts: false, backedUp: true)
            let registered = try await Self.addPasskey(server, phone, bearer: guest.accessToken)
            #expect(registered.status == 201, "\(registered.text)")
            #expect((registered.json["user"] as? [String: Any])?["is_anonymous"] as? Bool == false)
            #expect((registered.json["user"] as? [String: Any])?["id"] as? String == guest.userID)
            #expect((registered.json["passkey"] as? [String: Any])?["backed_up"] as? Bool == true)

            // A synced passkey reports counter 0 each time: accepted, again and again.
            for _ in 0..<2 {
                let session = try Session(try await Self.signIn(server, try phone.get(try await Self.signInOptions(server))))
                #expect(session.userID == guest.userID && !session.isAnonymous)
            }
            // The account's only way in cannot be removed.
            let only = try #require(try await Self.passkeys(server, guest.accessToken).first?["id"] as? String)
            let refused = try await server.delete("/v1/users/me/passkeys/\(only)", bearer: guest.accessToken)
            #expect(refused.errorCode == "CANNOT_UNLINK_ONLY_PROVIDER", "\(refused.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestSigningInWithAPasskeyOfAnAccountIsMergedAndReauthenticationNeedsTheAccountsOwn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "ada")
            let phone = Self.authenticator(server)
            #expect(try await Self.addPasskey(server, phone, bearer: ada.accessToken).status == 201)
            let guest = try await server.anonymous()
            let merged = try Session(try await Self.signIn(server, try phone.get(try await Self.signInOptions(server)),
                                                           bearer: guest.accessToken))
            #expect(merged.userID == ada.userID && merged.mergedFrom == guest.userID)

            // Re-authentication with the account's own passkey: a new session.
            server.clock.advance(by: 601)
            let renewed = try Session(try await Self.signIn(server, try phone.get(try await Self.signInOptions(server)),
                                                            intent: "reauthenticate", bearer: ada.accessToken))
            #expect(renewed.userID == ada.userID)
            // Someone else's passkey does not re-authenticate Ada.
            let grace = try await server.signIn(.google, sub: "grace")
            let graces = Self.authenticator(server)
            #expect(try await Self.addPasskey(server, graces, bearer: grace.accessToken).status == 201)
            let foreign = try await Self.signIn(server, try graces.get(try await Self.signInOptions(server)),
                                                intent: "reauthenticate", bearer: renewed.accessToken)
            #expect(foreign.status == 403 && foreign.errorReason == "identity_not_on_account", "\(foreign.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func eachBrokenRegistrationIsRefusedForItsReasonAndStoresNothing(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.google, sub: "ada")
            let authenticator = Self.authenticator(server)
            let faults: [(SoftwareAuthenticator.Fault, String)] = [
                (.wrongType, "type"), (.wrongOrigin, "origin"), (.crossOrigin, "origin"), (.wrongRPID, "rp_id"),
                (.noUserPresence, "user_presence"), (.noUserVerification, "user_verification"),
                (.unsupportedAlgorithm, "algorithm"), (.trailingBytes, "malformed"), (.wrongChallenge, "challenge"),
            ]
            for (fault, reason) in faults {
                let options = try await Self.registrationOptions(server, ada.accessToken)
                let answer = try await Self.register(server, try authenticator.create(options, fault: fault), bearer: ada.accessToken)
                #expect(answer.status == 401 && answer.errorCode == "INVALID_PASSKEY" && answer.errorReason == reason,
                        "\(fault): \(answer.text)")
            }
            #expect(try await Self.passkeys(server, ada.accessToken).isEmpty)

            // A challenge is used once, expires after 5 minutes, and belongs to the session that asked.
            let options = try await Self.registrationOptions(server, ada.accessToken)
            let credential = try authenticator.create(options)
            #expect(try await Self.register(server, credential, bearer: ada.accessToken).status == 201)
            let again = try await Self.register(server, credential, bearer: ada.accessToken)
            #expect(again.errorReason == "challenge", "\(again.text)")
            let late = try await Self.registrationOptions(server, ada.accessToken)
            server.clock.advance(by: 301)
            #expect(try await Self.register(server, try authenticator.create(late), bearer: ada.accessToken).errorReason == "challenge")
            let other = try await server.signIn(.google, sub: "ada-elsewhere")
            let theirs = try await Self.registrationOptions(server, other.accessToken)
            let ada2 = try await server.signIn(.google, sub: "ada")
            #expect(try await Self.register(server, try authenticator.create(theirs), bearer: ada2.accessToken).errorReason == "challenge")
            // Bodies that are not credentials.
            let missing = try await server.post("/v1/auth/passkeys/register", ["name": "x"], bearer: ada2.accessToken)
            #expect(missing.status == 400 && missing.errorDetails["field"] as? String == "credential")
            let notBase64 = try await server.post("/v1/auth/passkeys/register", ["credential": [
                "id": "AA", "rawId": "AA", "type": "public-key",
                "response": ["clientDataJSON": "***", "attestationObject": "AA"]]], bearer: ada2.accessToken)
            #expect(notBase64.errorReason == "malformed", "\(notBase64.text)")
            // Registration needs a bearer.
            #expect(try await server.post("/v1/auth/passkeys/register/options").status == 401)
            #expect(try await Self.passkeys(server, ada2.accessToken).count == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func eachBrokenSignInIsRefusedForItsReasonAndAStuckCounterIsAudited(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let ada = try await server.signIn(.google, sub: "ada")
            let authenticator = Self.authenticator(server)
            #expect(try await Self.addPasskey(server, authenticator, bearer: ada.accessToken).status == 201)
            let faults: [(SoftwareAuthenticator.Fault, String)] = [
                (.wrongType, "type"), (.wrongOrigin, "origin"), (.crossOrigin, "origin"), (.wrongRPID, "rp_id"),
                (.noUserPresence, "user_presence"), (.noUserVerification, "user_verification"),
                (.badSignature, "signature"), (.trailingBytes, "malformed"), (.wrongChallenge, "challenge"),
            ]
            for (fault, reason) in faults {
                let answer = try await Self.signIn(server, try authenticator.get(try await Self.signInOptions(server), fault: fault))
                #expect(answer.status == 401 && answer.errorCode == "INVALID_PASSKEY" && answer.errorReason == reason,
                        "\(fault): \(answer.text)")
            }
            // The counter moved on with each attempt above that was signed but refused before it counted; a good
            // sign-in now, then one whose counter does not increase: refused, audited as a possible clone.
            #expect(try await Self.signIn(server, try authenticator.get(try await Self.signInOptions(server))).status == 200)
            let cloned = try await Self.signIn(server, try authenticator.get(try await Self.signInOptions(server),
                                                                               fault: .counterNotIncreasing))
            #expect(cloned.errorReason == "counter", "\(cloned.text)")
            let audit = try await server.request(.GET, "/v1/admin/audit?type=passkey.clone_suspected", bearer: Self.key)
            #expect((audit.json["events"] as? [[String: Any]])?.count == 1, "\(audit.text)")

            // One assertion, sent eight times at once: one session, seven refusals of the used challenge.
            let assertion = try authenticator.get(try await Self.signInOptions(server))
            let answers = try await server.concurrently(8) { try await Self.signIn(server, assertion) }
            #expect(answers.filter { $0.status == 200 }.count == 1)
            #expect(answers.filter { $0.errorReason == "challenge" }.count == 7, "\(answers.map(\.text))")
            // Expired options.
            let options = try await Self.signInOptions(server)
            server.clock.advance(by: 301)
            #expect(try await Self.signIn(server, try authenticator.get(options)).errorReason == "challenge")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aPasskeyProvesTheOtherAccountOfAMergeAndBothAccountsPasskeysEndOnTheSurvivor(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "ada")
            let work = try await server.signIn(.google, sub: "ada-at-work")
            let (phone, laptop) = (Self.authenticator(server), Self.authenticator(server))
            #expect(try await Self.addPasskey(server, phone, bearer: ada.accessToken).status == 201)
            #expect(try await Self.addPasskey(server, laptop, bearer: work.accessToken).status == 201)

            let proof = try Self.json(try laptop.get(try await Self.signInOptions(server)))
            let body: [String: Any] = ["proof": ["provider": "passkey", "credential": proof]]
            let merged = try await server.post("/v1/users/me/merge", body, bearer: ada.accessToken)
            #expect(merged.status == 200, "\(merged.text)")
            // Both passkeys are Ada's now (no collision: an account holds several), and each signs in to her.
            #expect(try await Self.passkeys(server, ada.accessToken).count == 2)
            for authenticator in [phone, laptop] {
                #expect(try Session(try await Self.signIn(server, try authenticator.get(try await Self.signInOptions(server)))).userID == ada.userID)
            }
            // The same request again (its answer lost) answers the same merge; anyone else's use of the proof is a
            // replay of a spent challenge. A proof without a credential is a clear 400.
            let again = try await server.post("/v1/users/me/merge", body, bearer: ada.accessToken)
            #expect(again.status == 200 && again.json["merge_id"] as? String == merged.json["merge_id"] as? String, "\(again.text)")
            let eve = try await server.signIn(.google, sub: "eve")
            let replayed = try await server.post("/v1/users/me/merge", body, bearer: eve.accessToken)
            #expect(replayed.status == 401 && replayed.errorReason == "challenge", "\(replayed.text)")
            let empty = try await server.post("/v1/users/me/merge", ["proof": ["provider": "passkey"]], bearer: ada.accessToken)
            #expect(empty.status == 400 && empty.errorDetails["field"] as? String == "proof.credential")
        }
    }

    /// App backends hear of passkeys: added and removed (`identity.linked` / `identity.unlinked`, provider
    /// `passkey`) and a counter that went backwards (`passkey.clone_suspected`), at a real HTTP receiver.
    @Test func webhooksTellTheAppsBackendOfPasskeysAndOfASuspectedClone() async throws {
        let receiver = try await WebhookReceiver()
        try await TestServer.with(.sqlite, configure: WebhookTests.configure(receiver)) { server in
            let ada = try await server.signIn(.apple, sub: "ada")
            let key = Self.authenticator(server)
            #expect(try await Self.addPasskey(server, key, bearer: ada.accessToken).status == 201)
            #expect(try await Self.signIn(server, try key.get(try await Self.signInOptions(server))).status == 200)
            #expect(try await Self.signIn(server, try key.get(try await Self.signInOptions(server), fault: .counterNotIncreasing))
                .errorReason == "counter")
            let id = try #require(try await Self.passkeys(server, ada.accessToken).first?["id"] as? String)
            #expect(try await server.delete("/v1/users/me/passkeys/\(id)", bearer: ada.accessToken).status == 200)
            let deliveries = try await receiver.waitFor(4)
            let passkeyEvents = deliveries.filter { $0.data["provider"] == "passkey" || $0.type == "passkey.clone_suspected" }
            #expect(passkeyEvents.map(\.type) == ["identity.linked", "passkey.clone_suspected", "identity.unlinked"],
                    "\(deliveries.map(\.type))")
            #expect(passkeyEvents.allSatisfy { $0.data["user_id"] == ada.userID && WebhookTests.isSigned($0) })
            #expect(passkeyEvents.last?.data["passkey_id"] == id)
        }
        await receiver.stop()
    }

    /// Whatever arrives as a credential, the answer is a refusal in the one error shape or a passkey: never a 500.
    @Test func mutatedCredentialsOverHTTPAreRefusedNeverA500() async throws {
        try await TestServer.with(.sqlite) { server in
            let ada = try await server.signIn(.google, sub: "ada")
            let authenticator = Self.authenticator(server)
            var generator = PasskeyParserTests.SplitMix(state: 42)
            var statuses: [Int: Int] = [:]
            for round in 0..<40 {
                let options = try await Self.registrationOptions(server, ada.accessToken)
                var credential = try Self.json(try authenticator.create(options))
                var response = credential["response"] as? [String: Any] ?? [:]
                let field = round % 2 == 0 ? "attestationObject" : "clientDataJSON"
                var bytes = Base64URL.decode(response[field] as? String ?? "") ?? []
                for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
                if round % 5 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0..<max(1, bytes.count), using: &generator))) }
                response[field] = Base64URL.encode(bytes)
                credential["response"] = response
                let answer = try await server.post("/v1/auth/passkeys/register", ["credential": credential], bearer: ada.accessToken)
                statuses[answer.status, default: 0] += 1
                // Attestation `none` signs nothing: a flipped AAGUID, counter or backup flag is still a passkey.
                #expect(answer.status == 201 || (400..<500).contains(answer.status) && answer.errorCode != nil,
                        "\(answer.status) \(answer.text)")
            }
            #expect(statuses.keys.allSatisfy { $0 == 201 || (400..<500).contains($0) } && statuses[401, default: 0] > 20, "\(statuses)")
            #expect(try await Self.passkeys(server, ada.accessToken).count == statuses[201, default: 0])
        }
    }

    /// The cap of 20 passkeys holds at registration, not only when options are asked for: options fetched ahead
    /// (25 in 0.7.0's attack) register at most up to the cap, sequentially and racing.
    @Test(arguments: TestDatabase.available)
    func optionsFetchedAheadCannotCarryAnAccountPastTwentyPasskeys(database: TestDatabase) async throws {
        // The link limit (5 an hour) would stop the attack sooner: it is out of the way here, as over a day.
        try await TestServer.with(database, configure: {
            Self.configure(&$0)
            $0.rateLimits.enabled = false
        }) { server in
            let ada = try await server.signIn(.apple, sub: "collector")
            let authenticator = Self.authenticator(server)
            var options: [PublicKeyCredentialCreationOptionsJSON] = []
            for _ in 0..<24 { options.append(try await Self.registrationOptions(server, ada.accessToken)) }
            var credentials: [RegistrationResponseJSON] = []
            for option in options { credentials.append(try authenticator.create(option, rsa: false)) }
            for credential in credentials.prefix(16) {
                #expect(try await Self.register(server, credential, bearer: ada.accessToken).status == 201)
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for credential in credentials.dropFirst(16) {
                    group.addTask { try await Self.register(server, credential, bearer: ada.accessToken).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 4 && statuses.filter { $0 == 400 }.count == 4, "\(statuses)")
            #expect(try await Self.passkeys(server, ada.accessToken).count == 20)
            let more = try await server.post("/v1/auth/passkeys/register/options", bearer: ada.accessToken)
            #expect(more.status == 400 && more.errorDetails["field"] as? String == "passkeys")
        }
    }

    @Test func withoutARelyingPartyOutsideDevModePasskeysAreNotOfferedAndTheAssociationFilesFollowConfiguration() async throws {
        try await TestServer.with(.sqlite, configure: { $0.devMode = false }) { server in
            let answer = try await server.post("/v1/auth/passkeys/signin/options")
            #expect(answer.status == 400 && answer.errorCode == "UNSUPPORTED_PROVIDER", "\(answer.text)")
            #expect(try await server.get("/.well-known/apple-app-site-association").status == 404)
            #expect(try await server.get("/.well-known/assetlinks.json").status == 404)
        }
        let fingerprint = (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")
        try await TestServer.with(.sqlite, configure: {
            $0.passkeys.rpID = "id.example.com"
            $0.passkeys.appleAppIDs = ["ABCDE12345.com.example.app"]
            $0.passkeys.androidApps = [.init(package: "com.example.app", fingerprint: fingerprint)]
        }) { server in
            let association = try await server.get("/.well-known/apple-app-site-association")
            #expect(association.status == 200 && association.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            #expect(((association.json["webcredentials"] as? [String: Any])?["apps"] as? [String]) == ["ABCDE12345.com.example.app"])
            let links = try JSONSerialization.jsonObject(with: try await server.get("/.well-known/assetlinks.json").body) as? [[String: Any]]
            let target = links?.first?["target"] as? [String: Any]
            #expect(target?["package_name"] as? String == "com.example.app")
            #expect(target?["sha256_cert_fingerprints"] as? [String] == [fingerprint])
            #expect((links?.first?["relation"] as? [String])?.contains("delegate_permission/common.get_login_creds") == true)
            let options = try await Self.signInOptions(server)
            #expect(options.rpId == "id.example.com")
            // The Android app's origin is accepted: the hash of its certificate, base64url.
            let android = SoftwareAuthenticator(origin: "android:apk-key-hash:" + Base64URL.encode((0..<32).map { UInt8($0) }))
            let ada = try await server.signIn(.google, sub: "ada")
            #expect(try await Self.addPasskey(server, android, bearer: ada.accessToken).status == 201)
            #expect(try Session(try await Self.signIn(server, try android.get(try await Self.signInOptions(server)))).userID == ada.userID)
        }
    }
}
