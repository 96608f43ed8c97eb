import LanyardCore
import LanyardWire

// The email flow's request bodies are the contract's wire types (`LanyardWire/Email.swift`), read from the strictly
// parsed body. Flow ids, secrets and codes are bounded so nothing unbounded reaches a hash or a query.

extension EmailStartRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(email: try Field.nonEmpty(try fields.string("email"), "email", maximumLength: 1024),
                  intent: try fields.optionalCase("intent"),
                  redirectTo: try Field.optional(try fields.optionalString("redirect_to"), "redirect_to", maximumLength: 2048))
    }
}

extension EmailVerifyRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(flowID: try Field.nonEmpty(try fields.string("flow_id"), "flow_id", maximumLength: 64),
                  flowSecret: try Field.nonEmpty(try fields.string("flow_secret"), "flow_secret", maximumLength: 128),
                  code: try Field.nonEmpty(try fields.string("code"), "code", maximumLength: 32))
    }
}

extension EmailRecoverRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(email: try Field.nonEmpty(try fields.string("email"), "email", maximumLength: 320),
                  code: try Field.nonEmpty(try fields.string("code"), "code", maximumLength: 32))
    }
}

extension EmailCompleteRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        let wait: Int? = try fields.optionalInteger("wait")
        if let wait, !(0...30).contains(wait) {
            throw LanyardError.invalidRequest(field: "wait", "wait must be 0 to 30 seconds")
        }
        self.init(flowID: try Field.nonEmpty(try fields.string("flow_id"), "flow_id", maximumLength: 64),
                  flowSecret: try Field.nonEmpty(try fields.string("flow_secret"), "flow_secret", maximumLength: 128),
                  wait: wait)
    }
}
