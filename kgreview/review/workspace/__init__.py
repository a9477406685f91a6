"""The reviewer's workspace: the pages, forms, the queue's reads and the card."""
