"""`lanyard import` as an operator types it (reference section 24), on a fresh SQLite database and, with
$LANYARD_TEST_POSTGRES_URL, a fresh PostgreSQL database: every flag the guide names parses, a dry run writes nothing,
a Supabase user keeps its UUID with --keep-ids, a second run changes nothing, `list` shows the batch and `undo`
takes it back; the command exits 0 with its whole output (the database closed cleanly).
Runs the binary at $LANYARD_BINARY or .build/debug/lanyard. Run: python3 Tests/CLI/test_import_cli.py
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import unittest
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("LANYARD_BINARY", os.path.join(ROOT, ".build", "debug", "lanyard"))
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures", "imports")


def databases():
    folder = tempfile.mkdtemp(prefix="lanyard-cli-")
    found = [("sqlite", f"sqlite:{folder}/lanyard.sqlite")]
    postgres = os.environ.get("LANYARD_TEST_POSTGRES_URL")
    if postgres:
        name = "cli_" + uuid.uuid4().hex[:12]
        subprocess.run(["psql", postgres, "-qc", f"CREATE DATABASE {name}"], check=True)
        found.append(("postgres", postgres.replace("/postgres?", f"/{name}?")))
    return folder, found


class ImportCommandTests(unittest.TestCase):
    folder, targets = databases()
    master_key = base64.b64encode(os.urandom(32)).decode()

    def lanyard(self, database, *arguments, expect=0):
        environment = dict(os.environ, LANYARD_DEV="1", LANYARD_DATA_DIR=self.folder, LANYARD_DATABASE_URL=database,
                           LANYARD_MASTER_KEY=self.master_key, LANYARD_LOG_LEVEL="warning", SWIFT_BACKTRACE="enable=no")
        done = subprocess.run([BINARY, *arguments], env=environment, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, expect, f"lanyard {' '.join(arguments)}: {done.stdout}\n{done.stderr}")
        return done

    def json(self, database, *arguments):
        return json.loads(self.lanyard(database, *arguments, "--json").stdout)

    def test_a_supabase_import_keeps_its_uuids_runs_twice_unchanged_and_undoes(self):
        for name, database in self.targets:
            with self.subTest(database=name):
                path = os.path.join(FIXTURES, "supabase-users.json")
                with open(path) as file:
                    ids = [row["id"] for row in json.load(file)]
                dry = self.json(database, "import", "supabase", path, "--keep-ids", "--dry-run")
                self.assertTrue(dry["dry_run"])
                self.assertGreater(dry["created"], 0)
                self.assertEqual(self.json(database, "import", "list")["batches"], [])

                report = self.json(database, "import", "supabase", path, "--keep-ids")
                self.assertEqual(report["created"], dry["created"])
                batch = report["batch_id"]
                listed = self.lanyard(database, "users", "list").stdout
                kept = [identifier for identifier in ids if identifier in listed]
                self.assertEqual(len(kept), report["created"], listed)

                again = self.json(database, "import", "supabase", path, "--keep-ids")
                self.assertEqual((again["created"], again["unchanged"]), (0, report["created"]))
                self.assertIsNone(again.get("batch_id"))

                batches = self.json(database, "import", "list")["batches"]
                self.assertEqual([entry["id"] for entry in batches], [batch])
                undone = self.json(database, "import", "undo", batch)
                self.assertEqual(undone["removed"], report["created"])
                self.assertNotIn(kept[0], self.lanyard(database, "users", "list").stdout)

    def test_firebase_flags_parse_and_a_bad_one_is_named(self):
        for name, database in self.targets:
            with self.subTest(database=name):
                path = os.path.join(FIXTURES, "firebase-list-users.json")
                report = self.json(database, "import", "firebase", path, "--dry-run", "--provider", "github.com=github",
                                   "--microsoft-tenant", "9188040d-6c67-4c5b-b112-36a304b66dad")
                self.assertEqual(report["read"], 10)
                refused = self.lanyard(database, "import", "firebase", path, "--microsoft-tenant", "not-a-tenant",
                                       expect=64)
                self.assertIn("--microsoft-tenant", refused.stderr)
                text = self.lanyard(database, "import", "firebase", path, "--dry-run").stdout
                self.assertIn("Dry run: nothing was written.", text)

    def test_an_import_of_hundreds_exits_cleanly_with_its_report(self):
        # Enough people for the import to write through several connections of the pool at once.
        people = [{"uid": f"bulk{index:05d}", "email": f"bulk{index}@example.org", "emailVerified": True,
                   "providerData": [{"providerId": "google.com", "uid": f"2{index:020d}", "email": f"bulk{index}@example.org"}]}
                  for index in range(600)]
        path = os.path.join(self.folder, "bulk.json")
        with open(path, "w") as file:
            json.dump({"users": people}, file)
        for name, database in self.targets:
            with self.subTest(database=name):
                report = self.json(database, "import", "firebase", path)
                self.assertEqual((report["created"], report["identities"]["google"]), (600, 600))
                found = self.lanyard(database, "users", "list", "--query", "bulk599@example.org").stdout
                self.assertIn("bulk599@example.org", found)


if __name__ == "__main__":
    unittest.main(verbosity=2)
