public import CountersignCore

extension CountersignError.Code {
    /// A migration that was already applied has changed since (its checksum differs).
    public static let migrationChecksumMismatch = Self("migration_checksum_mismatch", kind: .internalFailure)
    /// The database records a migration version that no migration file describes although a
    /// later file exists: the file was removed. (Versions after the last file are a newer
    /// release's, and served as they are.)
    public static let migrationUnknownVersion = Self("migration_unknown_version", kind: .internalFailure)
    /// A migration is not applied although a later version is: it was added out of order.
    public static let migrationOutOfOrder = Self("migration_out_of_order", kind: .internalFailure)
    /// Two migration files share a version number.
    public static let migrationDuplicateVersion = Self("migration_duplicate_version", kind: .internalFailure)
    /// The migrations directory or one of its files cannot be read, or a file name is invalid.
    public static let migrationUnreadable = Self("migration_unreadable", kind: .internalFailure)
    /// The database refused a migration, or the migration history table (a role without the
    /// right to create tables in the schema): said with the server's own message.
    public static let migrationFailed = Self("migration_failed", kind: .internalFailure)
    /// The migrations directory lacks migrations the build needs (an older release's, or none).
    public static let migrationsIncomplete = Self("migrations_incomplete", kind: .internalFailure)
}
