"""Independent references: ground-truth shuffled divergences, the vulnerable-pair conjecture
search (Section 8) and Appendix A's laws."""
