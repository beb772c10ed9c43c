"""The figures the README and docs print, and the kit they share (bench/README.md)."""
