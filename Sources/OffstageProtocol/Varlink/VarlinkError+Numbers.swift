import OffstageCore

extension VarlinkError {
    /// `org.varlink.service.InvalidParameter` for a number that is NaN, infinite or out of range, naming the field,
    /// the value and the range it must fall in.
    public static func invalidParameter(_ error: NumberOutOfRange) -> VarlinkError {
        invalidParameter(error.field, description: error.description)
    }

    /// The result of `body`, a checked conversion (``CheckedNumber``), with its refusal as `InvalidParameter`.
    @discardableResult
    public static func checking<T>(_ body: () throws(NumberOutOfRange) -> T) throws(VarlinkError) -> T {
        do { return try body() } catch { throw invalidParameter(error) }
    }
}
