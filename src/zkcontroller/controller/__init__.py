"""The Kafka controller: events, context, state machines, elections, requests to brokers."""
