<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.8" tiledversion="1.8.2" name="tiles" tilewidth="16" tileheight="16" tilecount="4" columns="4">
 <image source="tiles.png" width="64" height="16"/>
 <tile id="0">
  <properties>
   <property name="collide:solid" type="bool" value="true"/>
  </properties>
 </tile>
 <tile id="1">
  <objectgroup draworder="index" id="2">
   <object id="1" x="0" y="16">
    <polygon points="0,0 16,0 16,-16"/>
   </object>
  </objectgroup>
 </tile>
 <tile id="2">
  <objectgroup draworder="index" id="2">
   <object id="1" x="0" y="0" width="16" height="6"/>
  </objectgroup>
 </tile>
</tileset>
