/// A Varlink interface: its IDL text, as `org.varlink.service.GetInterfaceDescription` returns it, and what the text
/// declares.
///
/// The text is syntax-checked when the value is made (see `VarlinkIDLChecker`), so a service cannot publish an
/// interface its clients fail to parse, and the service knows which methods exist (to tell `MethodNotFound` from
/// `MethodNotImplemented`).
public struct VarlinkInterfaceDescription: Sendable, Hashable {
    /// The interface name, e.g. `io.offstage.App`.
    public let name: String
    /// The IDL text.
    public let text: String
    /// The method names the interface declares, unqualified.
    public let methods: [String]
    /// The error names the interface declares, unqualified.
    public let errors: [String]
    /// The type names the interface declares.
    public let types: [String]

    /// Keeps `text`, an interface description written into the program, after checking it.
    ///
    /// A syntax error in such a text is a programming error, so it stops the process with the checker's message
    /// (line, column, what is wrong); a unit test that makes each interface catches it before anyone runs it. For
    /// text that comes from outside the program, use `init(validating:)`.
    public init(_ text: String) {
        do {
            try self.init(validating: text)
        } catch {
            preconditionFailure("Invalid Varlink interface description: \(error)")
        }
    }

    /// Checks `text` and keeps it.
    ///
    /// - Throws: `VarlinkIDLError` naming the line and column of the first syntax error.
    public init(validating text: String) throws(VarlinkIDLError) {
        let summary = try VarlinkIDLChecker.check(text)
        self.name = summary.name
        self.text = text
        self.methods = summary.methods
        self.errors = summary.errors
        self.types = summary.types
    }

    /// Whether the interface declares the method `name` (unqualified).
    public func declaresMethod(_ name: String) -> Bool {
        methods.contains(name)
    }

    /// The fully qualified name of the member `member`: `<interface>.<member>`.
    public func qualified(_ member: String) -> String {
        "\(name).\(member)"
    }
}

extension VarlinkInterfaceDescription {
    /// `org.varlink.service`, which every Varlink service implements.
    public static let service = VarlinkInterfaceDescription(
        """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """
    )

    /// `io.offstage.Protocol`: the errors an Offstage service replies when a message cannot be handled at all.
    public static let offstageProtocol = VarlinkInterfaceDescription(
        """
        # Errors about the messages themselves, which any Offstage Varlink service may reply.
        # After MessageTooLarge and MalformedMessage the service closes the connection:
        # it can no longer tell where the next message starts.
        interface io.offstage.Protocol

        # A message was longer than the service accepts, in bytes without its NUL terminator.
        error MessageTooLarge (limit: int)

        # A message was not a Varlink call: not JSON, not a JSON object, or without a string "method".
        error MalformedMessage (reason: string)

        # The call asked for a connection upgrade; no Offstage method offers one.
        error UpgradeNotSupported (method: string)

        # The service failed to produce an answer to a valid call; a bug worth reporting with the reason.
        error InternalError (reason: string)

        """
    )
}

/// The result of `org.varlink.service.GetInfo`.
public struct VarlinkServiceInfo: Codable, Sendable, Hashable {
    /// Who makes the service.
    public var vendor: String
    /// The product the service belongs to.
    public var product: String
    /// The product's version.
    public var version: String
    /// Where to read about it.
    public var url: String
    /// Every interface the service implements, `org.varlink.service` included.
    public var interfaces: [String]

    /// Service information with the given fields.
    public init(vendor: String, product: String, version: String, url: String, interfaces: [String]) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        self.interfaces = interfaces
    }
}

/// The parameters of `org.varlink.service.GetInterfaceDescription`.
public struct VarlinkInterfaceDescriptionRequest: Codable, Sendable, Hashable {
    /// The interface name.
    public var interface: String

    /// A request for the description of `interface`.
    public init(interface: String) { self.interface = interface }
}

/// The result of `org.varlink.service.GetInterfaceDescription`.
public struct VarlinkInterfaceDescriptionReply: Codable, Sendable, Hashable {
    /// The interface's IDL text.
    public var description: String

    /// A reply carrying `description`.
    public init(description: String) { self.description = description }
}
