import CountersignCore
import CountersignPostgres
import CountersignStorage
import Testing

@Suite("The schema this build needs")
struct SchemaVersionTests {
    @Test("is the newest migration file: raised with every new migration")
    func requiredIsTheNewestMigration() throws {
        let migrations = try MigrationRunner.load(directory: StorageFixture.migrationsDirectory)
        #expect(SchemaVersion.required == migrations.map(\.version).max())
        try SchemaVersion.check(migrations, from: StorageFixture.migrationsDirectory)
    }

    @Test("migrations that stop short of it are refused, none at all too")
    func migrationsShortOfItAreRefused() throws {
        let migrations = try MigrationRunner.load(directory: StorageFixture.migrationsDirectory)
        for kept in [migrations.dropLast(), []] {
            let error = #expect(throws: CountersignError.self) { try SchemaVersion.check(Array(kept), from: "/srv/old/migrations") }
            #expect(error?.code == .migrationsIncomplete)
            #expect(error?.message.contains("/srv/old/migrations") == true)
        }
    }
}
