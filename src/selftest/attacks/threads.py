# Allowed: threads.
import threading

results = []
lock = threading.Lock()

def work(i):
    with lock:
        results.append(i * i)

threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(("OK: " if sorted(results) == [0, 1, 4, 9] else "FAIL: ") + "4 threads: %s" % sorted(results))
