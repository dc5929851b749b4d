import Offstage

// Replaced by the Messenger example (registers for push, fetches on a background push and posts an alert).
print("Messenger")
