"""The emulated link: what one is (links), how it is made (netns, the delay line) and how it is verified before
anything is measured across it (linkcheck)."""
