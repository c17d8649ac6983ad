"""Kafka's wire protocol: framing and headers (`frames`), one declarative table of the inter-broker APIs of
Kafka 2.8 (`messages`) read and written by one generic codec (`codec`), and the mapping of the controller's
requests onto it (`control_codec`, with Fetch in `fetch_codec`; what both share in `plain_values`).
Client-facing APIs (ApiVersions, Metadata, DescribeCluster) use `kio`."""
