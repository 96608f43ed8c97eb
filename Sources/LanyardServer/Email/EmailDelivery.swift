import Foundation
import LanyardCore
import LanyardMail
import LanyardSupport
import Logging
import ServiceLifecycle

/// Sends the mail outbox (reference section 18), in every instance: woken by a commit on this instance or every
/// poll, it leases what is due and hands each mail to the SMTP server (TLS required), or, in dev mode without
/// one, keeps it in the emulator's mailbox. Failures are retried on `EmailOutbox`'s schedule; a 5xx answer or a
/// server without STARTTLS fails the mail at once. Never in a request: a slow mail server slows no API call.
struct EmailDelivery: Service {
    static let batchSize = 16

    let outbox: EmailOutbox
    /// nil: the mailbox.
    let smtp: SMTPClient?
    let settings: EmailSettings
    let wakeUp: MailWakeUp
    let pollInterval: Duration
    let metrics: ServerMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var failing = false
            while !Task.isCancelled {
                do {
                    // A full batch means more may be due: go again at once.
                    if try await deliverDue() == Self.batchSize { continue }
                    failing = false
                } catch {
                    logger.log(level: failing ? .debug : .warning, "email delivery could not read the outbox",
                               metadata: ["error": "\(String(describing: type(of: error)))"])
                    failing = true
                }
                await wakeUp.wait(upTo: pollInterval)
            }
        }
    }

    /// One round: lease what is due and attempt it, the batch's mails at once. Returns how many were leased.
    @discardableResult
    func deliverDue() async throws -> Int {
        let due = try await outbox.claimDue(leaseFor: 120, limit: Self.batchSize)
        await withTaskGroup(of: Void.self) { group in
            for mail in due { group.addTask { await attempt(mail) } }
        }
        return due.count
    }

    private func attempt(_ mail: EmailOutbox.Due) async {
        guard let smtp else {
            try? await outbox.recordSent(mail.id, keepBody: true)
            metrics.recordEmailOutcome("mailbox", duration: nil)
            return
        }
        let start = ContinuousClock.now
        let message = MailMessage(from: settings.from, to: mail.recipient, subject: mail.subject, text: mail.text,
                                  html: mail.html, messageID: mail.messageID, date: Date())
        do {
            try await smtp.send(message, from: settings.fromAddress, to: mail.recipient)
            try? await outbox.recordSent(mail.id, keepBody: false)
            metrics.recordEmailOutcome("sent", duration: ContinuousClock.now - start)
        } catch {
            let gaveUp = (try? await outbox.recordFailure(mail.id, flowID: mail.flowID, recipient: mail.recipient, userID: nil,
                                                          attempts: mail.attempts, error: error.description,
                                                          permanent: error.permanent)) ?? false
            metrics.recordEmailOutcome(gaveUp ? "failed" : "retry", duration: ContinuousClock.now - start)
            // The address is personal: the log names the mail by its outbox id only.
            logger.notice("email attempt failed", metadata: [
                "email_delivery": "\(mail.id)", "attempt": "\(mail.attempts + 1)", "error": "\(error.description)",
                "gave_up": "\(gaveUp)"])
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension EmailDelivery: CustomStringConvertible {
    var description: String { "EmailDelivery" }
}
