import Testing
@testable import OffstagePush
