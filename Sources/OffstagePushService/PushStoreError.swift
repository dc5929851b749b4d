import Foundation
import PostgresNIO

/// The push store could not do something: what went wrong and the fix.
public struct PushStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, and the fix.
    public var description: String

    /// Creates an error saying `description`.
    public init(_ description: String) {
        self.description = description
    }

    /// What `error` says, with the server's message and SQLSTATE for a PostgreSQL error (postgres-nio's own
    /// description hides them).
    public static func explain(_ error: any Error) -> String {
        if let error = error as? PushStoreError { return error.description }
        if let error = error as? PostgresTransactionError {
            if let closure = error.closureError { return explain(closure) }
            if let commit = error.commitError { return "commit failed: " + explain(commit) }
            if let begin = error.beginError { return "begin failed: " + explain(begin) }
        }
        if let error = error as? PSQLError {
            if let info = error.serverInfo, let message = info[.message] {
                return "\(message) (SQLSTATE \(info[.sqlState] ?? "?"))"
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// The error thrown inside a transaction's closure when `error` is a transaction's error, else `error`: a
    /// refusal of ours thrown in a transaction is shown as itself.
    static func unwrapped(_ error: any Error) -> any Error {
        if let error = error as? PostgresTransactionError, let closure = error.closureError { return closure }
        return error
    }

    /// The SQLSTATE of a PostgreSQL error, looking through a transaction's error.
    static func sqlState(_ error: any Error) -> String? {
        if let error = error as? PostgresTransactionError, let closure = error.closureError { return sqlState(closure) }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
