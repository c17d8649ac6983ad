"""Offline analysis of controller event logs and Kafka controller logs with PySpark."""
