/// A comma-separated table: a header row naming the columns, then rows of fields (RFC 4180 quoting: a field in
/// double quotes may hold commas, line breaks and doubled quotes).
public struct CSVTable: Hashable, Sendable {
    /// The column names from the first row.
    public let header: [String]
    /// The data rows.
    public let rows: [Row]

    /// One data row, with the 1-based line of the text it starts on (for error messages).
    public struct Row: Hashable, Sendable {
        /// The line of the text the row starts on, counting from 1.
        public let line: Int
        /// The fields, in column order.
        public let fields: [String]

        /// Subscripts a field by column index; nil past the end of a short row.
        public subscript(_ column: Int) -> String? { column < fields.count ? fields[column] : nil }
    }

    /// Parses `text`; blank lines are skipped, and a trailing line break is optional.
    public init(parsing text: String) {
        var records: [Row] = []
        var fields: [String] = []
        var field = ""
        var inQuotes = false
        var line = 1
        var recordLine = 1
        var characters = Array(text.unicodeScalars).makeIterator()
        var pending: Unicode.Scalar? = nil
        func finishRecord() {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { records.append(Row(line: recordLine, fields: fields)) }
            fields = []
        }
        while let scalar = pending ?? characters.next() {
            pending = nil
            if inQuotes {
                if scalar == "\"" {
                    let next = characters.next()
                    if next == "\"" { field.unicodeScalars.append("\"") } else { inQuotes = false; pending = next }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"": inQuotes = true
            case ",": fields.append(field); field = ""
            case "\r": break
            case "\n":
                finishRecord()
                line += 1
                recordLine = line
            default: field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !fields.isEmpty { finishRecord() }
        header = records.first?.fields ?? []
        rows = Array(records.dropFirst())
    }

    /// The index of the column named `name`, if there is one.
    public func column(_ name: String) -> Int? { header.firstIndex(of: name) }
}
