// Deliberately without `import Testing`, whose own `ExitStatus` would make the name ambiguous here.
#if canImport(OffstageCore)
    import OffstageCore
#else
    import OffstageDaemon
#endif

/// How an app process ended, under a name the test files can use beside Testing's `ExitStatus`.
typealias AppExitStatus = ExitStatus
