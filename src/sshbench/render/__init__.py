"""Presenting results: terminal tables (console, discovery, servers, sweep, compare, show), configuration
snippets, exports (one table of formats), charts and the offline HTML report. Computes nothing but layout:
statistics come from analyse/; never imports store, jobs or targets."""
