"""The HTML report of one date × codebook, and the headline shared with the CLI summary."""
