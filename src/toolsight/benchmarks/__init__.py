"""Layer 4: one module per benchmark — loader, settings, loop profile, scorer choice, tables, generated set."""
