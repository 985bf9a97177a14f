"""The computer review of finished hands (issue 21): ``review.review_hand`` values every
decision of the reviewed seats from their own view, ``marks`` turns losses into marks and an
accuracy figure, and ``service.AnalysisService`` runs reviews exactly once on the log
(docs/analysis.md)."""
