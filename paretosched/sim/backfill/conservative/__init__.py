"""Conservative backfilling (Mu'alem & Feitelson 2001) on processor groups: the pass (`decide`), its
kept plan and plain-count pass (`plan`), the availability profile (`profile`, `carry`), the slot search
(`slots`), and what it keeps between decisions (`cache`, `keep`)."""
