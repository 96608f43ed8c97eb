import LanyardCore
import LanyardSupport
import LanyardWire

// The request bodies of groups and merges are the contract's wire types (`LanyardWire/Groups.swift`,
// `LanyardWire/Merges.swift`), read here from the strictly parsed body (`BodyFields`), as `AuthRequests.swift`
// reads the auth bodies.

extension GroupSettingsBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(name: try fields.optionalString("name"), kind: try fields.optionalCase("kind"),
                  onOwnerDeleted: try fields.optionalCase("on_owner_deleted"),
                  membersCanInvite: try fields.optionalBool("members_can_invite"))
    }
}

extension InviteBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(role: try fields.optionalCase("role", allowed: [.admin, .member, .viewer]),
                  maxUses: try fields.optionalInteger("max_uses"), expiresIn: try fields.optionalInteger("expires_in"))
    }
}

extension MemberBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(role: try fields.optionalCase("role", allowed: [.admin, .member, .viewer]),
                  shareEmail: try fields.optionalBool("share_email"))
    }
}

extension TransferBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(userID: User.ID(Identifiers.canonical(try fields.string("user_id"))))
    }
}

extension PolicyBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(read: try fields.optionalCase("read", allowed: [.viewer, .member, .admin]),
                  write: try fields.optionalCase("write"))
    }
}

extension MergeBody: RequestBody {
    init(_ fields: BodyFields) throws {
        guard case .object(let proof) = try fields.value("proof") else {
            throw LanyardError.invalidRequest(field: "proof", "proof must be {\"provider\", \"id_token\"}")
        }
        guard let provider = proof["provider"]?.stringValue, !provider.isEmpty, !provider.containsNUL else {
            throw LanyardError.invalidRequest(field: "proof.provider", "proof.provider is required")
        }
        let wireProof: IdentityProof
        switch IdentityProof.kind(of: Provider(rawValue: provider)) {
        case .emailCode:
            // An email flow's code: `{"provider": "email", "flow_id", "flow_secret", "code"}`.
            let parts = try ["flow_id", "flow_secret", "code"].map { (name) throws -> String in
                guard let value = proof[name]?.stringValue, !value.isEmpty, !value.containsNUL, value.utf8.count <= 128 else {
                    throw LanyardError.invalidRequest(field: "proof.\(name)", "proof.\(name) is required for an email proof")
                }
                return value
            }
            wireProof = .emailCode(flowID: parts[0], flowSecret: parts[1], code: parts[2])
        case .passkey:
            // An assertion of the other account's passkey: `{"provider": "passkey", "credential": {…}}`.
            guard case .object(let credential)? = proof["credential"] else {
                throw LanyardError.invalidRequest(field: "proof.credential", "proof.credential is required for a passkey proof")
            }
            wireProof = .passkey(try AuthenticationResponseJSON(BodyFields(credential)))
        case .idToken:
            guard let token = proof["id_token"]?.stringValue, !token.isEmpty, !token.containsNUL else {
                throw LanyardError.invalidRequest(field: "proof.id_token", "proof.id_token is required")
            }
            wireProof = .idToken(provider: Provider(rawValue: provider), idToken: token)
        case .legacySession:
            // An old system's session proves no identity of the other account (reference section 24).
            throw LanyardError.unsupportedProvider(provider)
        }
        var release: [String] = []
        if fields.contains("release") {
            guard case .array(let values) = try fields.value("release"),
                  let names = Optional(values.compactMap(\.stringValue)), names.count == values.count else {
                throw LanyardError.invalidRequest(field: "release", "release must be a list of providers, such as [\"apple\"]")
            }
            release = names
        }
        self.init(proof: wireProof, keep: try fields.optionalCase("keep") ?? .current,
                  onConflict: try fields.optionalCase("on_conflict") ?? .newer, release: release,
                  dryRun: try fields.optionalBool("dry_run") ?? false)
    }
}

extension AdminMergeBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(into: Identifiers.canonical(try fields.string("into")), from: Identifiers.canonical(try fields.string("from")))
    }
}

/// `PUT …/data/{collection}/{id}`: the data as the strict parser read it (its depth and size are checked before
/// anything is stored).
extension DataRecordBody: RequestBody where Value == JSONValue {
    init(_ fields: BodyFields) throws {
        self.init(data: try fields.value("data"))
    }
}
