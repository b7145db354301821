"""A realistic corpus for the seccomp allowlist: what model code does with images and data (run in the sandbox)."""
import io, os, json, math, threading, tempfile, shutil, time, sys, asyncio, random, glob, re, collections
import numpy as np, cv2
from PIL import Image, ImageDraw, ImageFilter, ImageOps, ImageEnhance
rng = np.random.default_rng(0)
Image.fromarray(rng.integers(0,255,(300,400,3),dtype=np.uint8)).save('in.png')
Image.fromarray(rng.integers(0,255,(300,400,3),dtype=np.uint8)).save('in.jpg', quality=90)
img = cv2.imread('in.png'); g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
e = cv2.Canny(g, 50, 150); cnts,_ = cv2.findContours(e, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
cv2.imwrite('e.png', e); cv2.imwrite('e.jpg', e); cv2.imencode('.png', img)
cv2.GaussianBlur(img,(5,5),0); cv2.resize(img,(800,600)); cv2.warpAffine(img, cv2.getRotationMatrix2D((200,150),30,1),(400,300))
cv2.threshold(g,0,255,cv2.THRESH_OTSU); cv2.HoughLinesP(e,1,np.pi/180,50); cv2.morphologyEx(g, cv2.MORPH_OPEN, np.ones((3,3)))
cv2.matchTemplate(g, g[10:50,10:50], cv2.TM_CCOEFF_NORMED); cv2.equalizeHist(g); cv2.calcHist([g],[0],None,[256],[0,256])
cv2.connectedComponentsWithStats(e); cv2.distanceTransform(255-e, cv2.DIST_L2, 3); cv2.fastNlMeansDenoising(g[:64,:64])
orb = cv2.ORB_create(); orb.detectAndCompute(g, None); cv2.SIFT_create().detect(g[:100,:100], None)
cv2.putText(img, 'x', (10,10), cv2.FONT_HERSHEY_SIMPLEX, 1, (255,0,0)); cv2.rectangle(img,(1,1),(5,5),(0,0,255),2)
im = Image.open('in.jpg'); im.load(); im.crop((0,0,100,100)).rotate(30, expand=True).save('t.png'); ImageOps.grayscale(im).filter(ImageFilter.GaussianBlur(2)).save('t2.jpg')
ImageDraw.Draw(im).text((5,5),'hello'); ImageEnhance.Contrast(im).enhance(2); im.convert('L').point(lambda v: 255 if v>128 else 0)
a = np.linalg.svd(rng.random((50,50))); np.fft.fft2(rng.random((64,64))); np.save('a.npy', a[0]); np.load('a.npy')
np.savetxt('a.txt', a[1]); np.sort(rng.random(100000)); np.einsum('ij,jk', a[0], a[0])
import pandas as pd; df = pd.DataFrame({'a': range(10), 'b': list('abcdefghij')}); df.to_csv('d.csv'); pd.read_csv('d.csv').describe(); df.groupby('b').sum()
import scipy.ndimage as ndi, scipy.stats, scipy.signal, scipy.optimize; ndi.label(e>0); ndi.gaussian_filter(g, 2); scipy.optimize.minimize(lambda x: (x-3)**2, 0)
import sympy; sympy.solve(sympy.Symbol('x')**2-4)
try:
    import sklearn.cluster; sklearn.cluster.KMeans(3, n_init=2).fit(rng.random((100,2)))
except ImportError:
    pass
import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
fig, ax = plt.subplots(); ax.plot([1,2,3]); ax.set_title('t'); ax.text(1,1,'x'); fig.savefig('p.png'); fig.savefig('p.jpg'); fig.savefig('p.pdf'); plt.close('all')
plt.imshow(g); plt.savefig('p2.png')
from bs4 import BeautifulSoup; BeautifulSoup('<p>x</p>','html.parser').text
import tabulate; tabulate.tabulate([[1,2]])
t = threading.Thread(target=lambda: sum(range(10000))); t.start(); t.join()
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(2) as ex: list(ex.map(lambda x: x*x, range(10)))
async def f(): await asyncio.sleep(0.01); return 1
asyncio.run(f())
pid = os.fork()
if pid == 0: os._exit(0)
os.waitpid(pid, 0)
os.makedirs('sub/dir', exist_ok=True); shutil.copy('in.png','sub/x.png'); shutil.copy2('in.png','sub/y.png'); shutil.move('sub/y.png','sub/z.png'); os.listdir('.'); glob.glob('*.png'); os.remove('sub/z.png'); shutil.rmtree('sub')
with tempfile.NamedTemporaryFile(dir='.') as tf: tf.write(b'x')
tempfile.mkdtemp(dir='.')
os.stat('in.png'); os.path.getsize('in.png'); os.path.exists('nope'); os.getcwd(); os.cpu_count(); time.time(); time.sleep(0.001)
os.chmod('t.png', 0o644); os.utime('t.png'); os.rename('t.png','t3.png'); os.link('t3.png','hl.png')  # symlinks: denied by design
json.dumps({'a':1}); random.random(); os.urandom(8); print(sys.version); sys.stdout.flush()
import hashlib, base64, zlib, gzip, pickle, struct, csv, sqlite3
sqlite3.connect(':memory:').execute('select 1'); hashlib.sha256(b'x').hexdigest(); zlib.compress(b'x'*100)
with gzip.open('g.gz','wb') as gf: gf.write(b'x')
pickle.dumps(a[0])
print('CORPUS OK')
