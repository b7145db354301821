"""Top-level test configuration: puts `tests/` on the import path for the shared helpers
(`sharedfiles`, `fidelitykit`) that test files in every folder use."""
