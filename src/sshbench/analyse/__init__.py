"""Reading results (pure): ranked result rows, sweep dimensions and recommendations, run comparisons and
security policies. Works on the data model only; never imports store, jobs or targets."""
